package state_test

import (
	"context"
	"testing"

	"github.com/squallstream/squall/state"
)

// BenchmarkLRU measures the cache's own cost: a MultiGet of 100 keys of
// which about 90 hit, and a MultiPut of 100 keys, on a cache of 1000
// entries over 1100 keys of a memory map.
func BenchmarkLRU(b *testing.B) {
	ctx := context.Background()
	const size, span, batch = 1000, 1100, 100
	keys, vals := keysN(0, span), valsN(0, span)
	l, err := state.NewLRU[[]byte](state.NewMemory(""), size)
	if err != nil {
		b.Fatal(err)
	}
	if err := l.MultiPut(ctx, keys, vals); err != nil {
		b.Fatal(err)
	}
	b.Run("get", func(b *testing.B) {
		at := 0
		for b.Loop() {
			from := at % (span - batch)
			if _, err := l.MultiGet(ctx, keys[from:from+batch]); err != nil {
				b.Fatal(err)
			}
			at += 37
		}
	})
	b.Run("put", func(b *testing.B) {
		at := 0
		for b.Loop() {
			from := at % (span - batch)
			if err := l.MultiPut(ctx, keys[from:from+batch], vals[from:from+batch]); err != nil {
				b.Fatal(err)
			}
			at += 37
		}
	})
}
