package ops_test

import (
	"context"
	"fmt"
	"os"

	"github.com/squallstream/squall/ops"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/trident"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// Word counts and sums in opaque state, with a query stream that reads
// them back. Bad amounts go to the dead letters.
func Example() {
	var sales, queries spout.Batcher // your sources
	tt := trident.NewTopology("sales")
	s := tt.NewStream("sales", trident.BatchSource(trident.Fields{"word", "amount"}, func() spout.Batcher { return sales })).
		Filter(ops.FilterNull("word"))
	g := s.GroupBy("word")
	counts := trident.PersistentAggregate(g, trident.OpaqueMemory[int64]("counts"), trident.Fields{"word"}, ops.Count{}, "count")
	sums := trident.PersistentAggregate(g, trident.OpaqueMemory[int64]("sums"), trident.Fields{"amount"}, ops.Sum[int64]("amount"), "sum")

	q := tt.NewStream("queries", trident.BatchSource(trident.Fields{"word"}, func() spout.Batcher { return queries }))
	q = trident.StateQuery(q, counts, trident.Fields{"word"}, ops.MapGet[state.MapState[int64]](), "count")
	q = trident.StateQuery(q, sums, trident.Fields{"word"}, ops.MapGet[state.MapState[int64]](), "sum")
	q.Filter(ops.Debug("answer", os.Stdout))

	cfg := trident.Config{}
	cfg.DeadLetters = &trident.MemoryDeadLetters{} // where rejected tuples go
	_ = cfg                                        // tt.Submit(ctx, cfg)
}

func ExampleSum() {
	sum := ops.Sum[int64]("amount")
	total := sum.Zero()
	for _, v := range []any{2, int64(3), uint8(4), nil} {
		n, err := sum.Init(trident.NewTuple(trident.Fields{"amount"}, v))
		if err != nil {
			fmt.Println(err)
			return
		}
		total = sum.Combine(total, n)
	}
	fmt.Println(total)

	_, err := sum.Init(trident.NewTuple(trident.Fields{"amount"}, "ten"))
	fmt.Println(err)
	// Output:
	// 9
	// trident: tuple rejected: ops: Sum: field "amount" holds string "ten", want int64
}

func ExampleMax() {
	maxAge := ops.Max[int64]("age")
	best := maxAge.Zero() // nil: no value yet
	for _, age := range []any{31, nil, uint8(47), int64(12)} {
		v, _ := maxAge.Init(trident.NewTuple(trident.Fields{"age"}, age))
		best = maxAge.Combine(best, v)
	}
	fmt.Println(*best)
	// Output: 47
}

// One partition's part of FirstN: the two highest scores of a batch.
func ExampleFirstN() {
	top := ops.FirstN[float64](2, "score", true)
	out := printer{ops.Debug("top", os.Stdout)}
	acc, _ := top.Init(txn.Attempt{TxID: 1}, out)
	for _, row := range [][]any{{"ann", 7.5}, {"bob", 9}, {"cy", nil}, {"dee", 8}} {
		acc, _ = top.Aggregate(acc, trident.NewTuple(trident.Fields{"name", "score"}, row...), out)
	}
	_ = top.Complete(acc, out)
	// Output:
	// top: name="bob" score=9
	// top: name="dee" score=8
}

// printer is a collector that prints emitted (name, score) tuples
// through a Debug filter.
type printer struct{ f trident.Filter }

func (p printer) Emit(values ...any) {
	_, _ = p.f.Keep(context.Background(), trident.NewTuple(trident.Fields{"name", "score"}, values...))
}

func (printer) ReportError(error) {}

func ExampleDebug() {
	f := ops.Debug("sale", os.Stdout)
	_, _ = f.Keep(context.Background(), trident.NewTuple(trident.Fields{"word", "amount"}, "cow", 2))
	// Output: sale: word="cow" amount=2
}

func ExampleEquals() {
	same := ops.Equals("home", "away")
	for _, score := range [][]any{{2, 2}, {1, 3}, {int64(0), uint8(0)}} {
		keep, _ := same.Keep(context.Background(), trident.NewTuple(trident.Fields{"home", "away"}, score...))
		fmt.Println(score, keep)
	}
	// Output:
	// [2 2] true
	// [1 3] false
	// [0 0] true
}
