package kafka

import (
	"math"
	"testing"
)

// TestFetchBytes: a fetch asks for twice the budget plus 64 KiB, never
// more than maxFetchBytes, also for the unbounded budget of a re-emit.
func TestFetchBytes(t *testing.T) {
	for _, c := range []struct {
		budget int
		want   int64
	}{
		{-5, 64 << 10},
		{0, 64 << 10},
		{1000, 2000 + 64<<10},
		{maxFetchBytes/2 - 64<<10, maxFetchBytes - 64<<10},
		{maxFetchBytes / 2, maxFetchBytes},
		{maxFetchBytes, maxFetchBytes},
		{math.MaxInt, maxFetchBytes},
	} {
		if got := fetchBytes(c.budget); got != c.want {
			t.Errorf("fetchBytes(%d) = %d, want %d", c.budget, got, c.want)
		}
	}
}
