package trident

import (
	"context"
	"maps"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/statetest"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// TestCachedReadsEachKeyOnce: a word count over Cached maps reads each
// word from its backing map once, however many batches update it, and
// counts exactly, with every sentence's first attempt failing (replays
// write the same keys again).
func TestCachedReadsEachKeyOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var reads atomic.Int64
		backing := MemoryBacking("counts")
		countReads := func(op statetest.Op, _ int, keys []state.Key) statetest.Fault {
			if op == statetest.OpGet {
				reads.Add(int64(len(keys)))
			}
			return statetest.Fault{}
		}
		counted := func(ctx context.Context, p, n int) (state.BackingMap[[]byte], error) {
			m, err := backing(ctx, p, n)
			if err != nil {
				return nil, err
			}
			return statetest.NewFaultMap(m, countReads), nil
		}
		f := Opaque[int64]("counts", Cached(100, counted))
		lines := append(append([]string{}, sentences...), sentences...)
		failed := map[string]bool{}
		tt := NewTopology("cached")
		s := tt.NewStream("sentences", BatchSource(Fields{"sentence"}, func() spout.Batcher { return newFixed(1, lines...) }))
		ws := s.Each(Fields{"sentence"}, FunctionFunc(func(ctx context.Context, tu Tuple, out Collector) error {
			if line := tu.String("sentence"); !failed[line] {
				failed[line] = true
				return failure.Retryable(errFlaky)
			}
			return split(ctx, tu, out)
		}), "word")
		PersistentAggregate(ws.GroupBy("word").Parallelism(2), f, Fields{"word"}, count{}, "count")
		r := submit(t, tt, Config{})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := r.WaitCommitted(ctx, txn.TxID(len(lines))); err != nil {
			t.Fatal(err)
		}
		want := wantCounts()
		for w := range want {
			want[w] *= 2
		}
		got := readCounts(t, Opaque[int64]("counts", backing), 2, words()...)
		if !maps.Equal(got, want) {
			t.Fatalf("counts = %v, want %v", got, want)
		}
		distinct := map[string]bool{}
		for _, l := range sentences {
			for _, w := range strings.Fields(l) {
				distinct[w] = true
			}
		}
		if n := reads.Load(); n != int64(len(distinct)) {
			t.Fatalf("%d keys read from the backing maps, want each of the %d words once", n, len(distinct))
		}
	})
}

// TestCachedRefusesSizeBelowOne: a cache of no entries fails the open
// of the state, naming the size.
func TestCachedRefusesSizeBelowOne(t *testing.T) {
	_, err := Cached(0, MemoryBacking("counts"))(context.Background(), 0, 1)
	if err == nil || !strings.Contains(err.Error(), "size 0") {
		t.Fatalf("got %v, want an error naming size 0", err)
	}
}
