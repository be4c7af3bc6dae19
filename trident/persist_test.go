package trident

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// letters sums the lengths of words.
type letters struct{}

func (letters) Init() int64 { return 0 }
func (letters) Reduce(acc int64, t Tuple) (int64, error) {
	return acc + int64(len(t.String("word"))), nil
}

// TestPersistentReduceAndGlobal keeps per-word letter sums with a reducer
// and a global word count, through replays caused by failures in the
// commit phase, and checks both are exact.
func TestPersistentReduceAndGlobal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFixed(1, sentences...)
		sums, total := OpaqueMemory[int64]("sums"), TransactionalMemory[int64]("total")
		tt := NewTopology("reduce")
		w := tt.NewStream("s", BatchSource(Fields{"sentence"}, func() spout.Batcher { return src })).FlatMap(splitWords, "word")
		failed := map[txn.TxID]bool{}
		st := PersistentReduce(w.GroupBy("word").Parallelism(2), sums, Fields{"word"}, letters{}, "letters")
		st.NewValuesStream().Each(Fields{"word"}, FunctionFunc(func(context.Context, Tuple, Collector) error {
			return nil
		}))
		gl := PersistentAggregateGlobal(w, total, Fields{"word"}, count{}, "words")
		gl.NewValuesStream().Each(Fields{"words"}, FunctionFunc(func(_ context.Context, tu Tuple, _ Collector) error {
			// Fail each batch's commit once, after the state write.
			n := txn.TxID(tu.Get("words").(int64))
			if !failed[n] {
				failed[n] = true
				return failure.Retryable(errFlaky)
			}
			return nil
		}))
		r := submit(t, tt, Config{})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := r.WaitCommitted(ctx, 5); err != nil {
			t.Fatal(err)
		}
		want := map[string]int64{}
		var words int64
		for _, s := range sentences {
			for _, w := range strings.Fields(s) {
				want[w] += int64(len(w))
				words++
			}
		}
		got := readCounts(t, sums, 2, "the", "cow", "candy")
		for _, w := range []string{"the", "cow", "candy"} {
			if got[w] != want[w] {
				t.Fatalf("%q: %d letters, want %d", w, got[w], want[w])
			}
		}
		ms, _ := total(ctx, 0, 1)
		v, err := ms.MultiGet(ctx, []state.Key{state.GlobalKey()})
		if err != nil || v[0].Val != words {
			t.Fatalf("global count = %v (%v), want %d", v[0].Val, err, words)
		}
		if len(failed) == 0 {
			t.Fatal("no commit failed")
		}
	})
}
