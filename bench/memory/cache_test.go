package memory

import (
	"context"
	"fmt"
	"testing"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/opaque"
	"github.com/squallstream/squall/txn"
)

// discard is a backing map that stores nothing: every key is absent, every
// write vanishes, so the heap measured is the cache's alone.
type discard struct{}

func (discard) MultiGet(_ context.Context, keys []state.Key) ([]state.Entry[[]byte], error) {
	return make([]state.Entry[[]byte], len(keys)), nil
}

func (discard) MultiPut(context.Context, []state.Key, [][]byte) error { return nil }

// BenchmarkOpaqueCacheKeyMemory fills a state.LRU of n entries under an
// opaque map of int64 counts (the room timelines' arrangement: opaque.New
// over NewLRU over the store) with n keys of the form (room, hour), 1,000
// a batch, each batch BeginCommit, MultiUpdate and Commit, the keys made
// afresh per batch and dropped after it (as a batch's keys are), and
// reports the live heap per cached key (bytes/cached-key): the key's
// encoding, the opaque value (txid, curr, prev) and the LRU's entry.
func BenchmarkOpaqueCacheKeyMemory(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			ctx := context.Background()
			inc := state.ValueUpdaterFunc[int64](func(old int64, _ bool) int64 { return old + 1 })
			perItem(b, n, "bytes/cached-key", func() any {
				lru, err := state.NewLRU[[]byte](discard{}, n)
				if err != nil {
					b.Fatal(err)
				}
				m := opaque.New[int64](lru, state.MapOptions[int64]{})
				const per = 1000
				ups := make([]state.ValueUpdater[int64], per)
				for i := range ups {
					ups[i] = inc
				}
				for start := 0; start < n; start += per {
					tx := txn.TxID(start/per + 1)
					keys := make([]state.Key, per)
					for i := range keys {
						k := start + i
						keys[i] = state.MustKey(fmt.Sprintf("room-%02d", k%12), int64(1767600000+3600*(k/12)))
					}
					if err := m.BeginCommit(ctx, tx); err != nil {
						b.Fatal(err)
					}
					if _, err := m.MultiUpdate(ctx, keys, ups); err != nil {
						b.Fatal(err)
					}
					if err := m.Commit(ctx, tx); err != nil {
						b.Fatal(err)
					}
				}
				if st := lru.Len(); st != n {
					b.Fatalf("cache holds %d keys, want %d", st, n)
				}
				return m
			})
		})
	}
}
