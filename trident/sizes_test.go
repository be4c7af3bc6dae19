package trident

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/trident/internal/runtime"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// generated emits n tuples with values 0..n-1 (modulo keys) in batch 1 and
// nothing afterwards.
type generated struct{ n, keys int }

func (g generated) EmitBatch(_ context.Context, a txn.Attempt, c spout.Collector) error {
	if a.TxID == 1 {
		for i := range g.n {
			c.Emit(i % g.keys)
		}
	}
	return nil
}
func (generated) Ack(context.Context, txn.TxID) error { return nil }

// TestBatchSizes counts batches of no tuple, one tuple, a million tuples
// over few keys, and many distinct keys.
func TestBatchSizes(t *testing.T) {
	cases := []struct{ n, keys int }{{0, 1}, {1, 1}, {1_000_000, 10}, {100_000, 100_000}}
	if testing.Short() {
		cases = cases[:2]
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("tuples=%d/keys=%d", c.n, c.keys), func(t *testing.T) {
			f := OpaqueMemory[int64]("sizes")
			tt := NewTopology("sizes")
			s := tt.NewStream("gen", BatchSource(Fields{"k"}, func() spout.Batcher { return generated{c.n, c.keys} }))
			PersistentAggregate(s.GroupBy("k").Parallelism(2), f, Fields{"k"}, count{}, "count")
			r := submit(t, tt, Config{})
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			if err := r.WaitCommitted(ctx, 2); err != nil {
				t.Fatal(err)
			}
			var total int64
			keys := make([]any, c.keys)
			for i := range keys {
				keys[i] = i
			}
			for p := range 2 {
				ms, _ := f(ctx, p, 2)
				vals, err := ms.MultiGet(ctx, keysOf(keys...))
				if err != nil {
					t.Fatal(err)
				}
				for _, v := range vals {
					total += v.Val
				}
			}
			if total != int64(c.n) {
				t.Fatalf("counted %d of %d tuples", total, c.n)
			}
		})
	}
}

// TestSlowBatchTimesOutAndIsReplayed: the first attempt of batch 1 takes
// longer than the message timeout, so it fails and is replayed; the counts
// stay exact.
func TestSlowBatchTimesOutAndIsReplayed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFixed(4, sentences...)
		f := OpaqueMemory[int64]("counts")
		var calls atomic.Int32
		tt := NewTopology("slow")
		s := tt.NewStream("s", BatchSource(Fields{"sentence"}, func() spout.Batcher { return src }))
		g := s.Each(Fields{"sentence"}, FunctionFunc(func(ctx context.Context, tu Tuple, out Collector) error {
			if calls.Add(1) == 1 {
				time.Sleep(3 * time.Minute) // the message timeout is 30s
			}
			return split(ctx, tu, out)
		}), "word").GroupBy("word")
		PersistentAggregate(g, f, Fields{"word"}, count{}, "count")
		r := submit(t, tt, Config{})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		if err := r.WaitCommitted(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if got := readCounts(t, f, 1, words()...); fmt.Sprint(got) != fmt.Sprint(wantCounts()) {
			t.Fatalf("counts = %v, want %v", got, wantCounts())
		}
		if failed := r.Stats().Components[runtime.MasterComponent].TimedOut; failed == 0 {
			t.Fatal("the slow batch did not time out")
		}
	})
}
