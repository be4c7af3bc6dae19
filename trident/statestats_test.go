package trident

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/trident/coordstore"
)

// TestStateStatsAndFencing: a word count's state counts the keys its
// commits updated; a second submission over the same store and state
// supersedes the first, whose next write is rejected and counted.
func TestStateStatsAndFencing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := coordstore.NewMemory()
		f := OpaqueMemory[int64]("fenced-counts")
		first := submit(t, wordCount(newFixed(1, sentences...), f, 1), Config{Store: store})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := first.WaitCommitted(ctx, 4); err != nil {
			t.Fatal(err)
		}
		// Each sentence is its own batch, so the keys updated are the
		// distinct words of each sentence.
		want := uint64(0)
		for _, s := range sentences {
			seen := map[string]bool{}
			for _, w := range splitAll(s) {
				seen[w] = true
			}
			want += uint64(len(seen))
		}
		states := first.States()
		if len(states) != 1 || states[0].Name == "" || states[0].Component == "" {
			t.Fatalf("states = %+v", states)
		}
		if s := states[0]; s.Reads != want || s.Writes != want || s.Errors != 0 {
			t.Fatalf("state %+v, want %d reads and writes", s, want)
		}
		if n := first.FencingRejections(); n != 0 {
			t.Fatalf("%d fencing rejections before a newer owner", n)
		}

		second := submit(t, wordCount(newFixed(1, "late words"), f, 1), Config{Store: store})
		select {
		case <-first.Halted():
		case <-ctx.Done():
			t.Fatal("the superseded submission did not halt")
		}
		if err := first.Err(); !errors.Is(err, ErrSuperseded) {
			t.Fatalf("halted with %v", err)
		}
		if n := first.FencingRejections(); n == 0 {
			t.Fatal("no fencing rejection counted for the superseded submission")
		}
		if err := second.WaitCommitted(ctx, second.Committed()+1); err != nil {
			t.Fatal(err)
		}
		if n := second.FencingRejections(); n != 0 {
			t.Fatalf("the newer owner counted %d rejections", n)
		}
	})
}
