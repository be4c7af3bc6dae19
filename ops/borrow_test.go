package ops_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/squallstream/squall/ops"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/trident"
	"github.com/squallstream/squall/trident/spout"
)

func TestWhichCombinersBorrow(t *testing.T) {
	cases := map[string]struct {
		c    any
		want bool
	}{
		"Count":      {ops.Count{}, true},
		"Sum":        {ops.Sum[int64]("n"), true},
		"Min string": {ops.Min[string]("w"), true},
		"MaxBy any":  {ops.MaxBy[any]("w", func(a, b any) int { return 0 }), false},
	}
	for name, c := range cases {
		b, ok := c.c.(trident.TupleBorrower)
		if got := ok && b.BorrowsTuples(); got != c.want {
			t.Errorf("%s borrows = %v, want %v", name, got, c.want)
		}
	}
}

// TestRejectedBorrowedValuesKeepTheirWords: words emitted with EmitString
// into Count and Sum (which borrow, so the words are built in reused
// storage) are counted, and each word Sum rejects keeps its own value in
// the error, not the word the storage held last.
func TestRejectedBorrowedValuesKeepTheirWords(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lines := batches{{{"the cow jumped over the moon"}, {"four score and seven"}}}
		dead := &trident.MemoryDeadLetters{}
		tt := trident.NewTopology("borrowed")
		words := tt.NewStream("lines", trident.BatchSource(trident.Fields{"line"}, func() spout.Batcher { return lines })).
			Each(trident.Fields{"line"}, trident.FunctionFunc(func(_ context.Context, t trident.Tuple, out trident.Collector) error {
				for w := range strings.SplitSeq(t.String("line"), " ") {
					trident.EmitString(out, w)
				}
				return nil
			}), "word")
		g := words.GroupBy("word")
		counts := trident.OpaqueMemory[int64]("counts")
		trident.PersistentAggregate(g, counts, trident.Fields{"word"}, ops.Count{}, "count")
		trident.PersistentAggregate(g, trident.OpaqueMemory[int64]("sums"), trident.Fields{"word"}, ops.Sum[int64]("word"), "sum")

		runUntil(t, tt, trident.Config{DeadLetters: dead}, 2)
		ctx := context.Background()
		ms, err := counts(ctx, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		key, _ := state.NewKey("the")
		if got, err := ms.MultiGet(ctx, []state.Key{key}); err != nil || len(got) != 1 || got[0] != (state.Entry[int64]{Val: 2, Found: true}) {
			t.Fatalf("count of \"the\" = %v, %v; want 2", got, err)
		}
		letters := dead.Letters()
		if len(letters) != 10 {
			t.Fatalf("%d letters, want the 10 words", len(letters))
		}
		for _, l := range letters {
			var ve *ops.ValueError
			if !errors.As(l.Err, &ve) || ve.Value != l.Values[1] {
				t.Errorf("letter of %q has error %v: want its own word", l.Values[1], l.Err)
			}
		}
	})
}
