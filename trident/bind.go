package trident

import (
	"context"

	"github.com/squallstream/squall/trident/internal/exec"
)

// The user's operations as the processor (trident/internal/exec) calls
// them: on a tuple's values, which these adapters present as a Tuple of
// the fields the operation was declared with.

// eachFunc runs a Function on the input fields (at idx) of its parent's
// tuple.
type eachFunc struct {
	fn  Function
	idx []int
	sch *schema // the input fields
}

func (f eachFunc) Execute(ctx context.Context, values []any, out Collector) error {
	return f.fn.Execute(ctx, project(values, f.idx, f.sch), out)
}

// filterFunc, mapFunc and flatMapFunc run their operation on the whole
// tuple of their parent, whose fields are sch.
type filterFunc struct {
	f   Filter
	sch *schema
}

func (f filterFunc) Keep(ctx context.Context, values []any) (bool, error) {
	return f.f.Keep(ctx, Tuple{values: values, sch: f.sch})
}

type mapFunc struct {
	fn  MapFunction
	sch *schema
}

func (f mapFunc) Map(ctx context.Context, values []any) ([]any, error) {
	return f.fn.Map(ctx, Tuple{values: values, sch: f.sch})
}

type flatMapFunc struct {
	fn  FlatMapFunction
	sch *schema
}

func (f flatMapFunc) Execute(ctx context.Context, values []any, out Collector) error {
	return f.fn.FlatMap(ctx, Tuple{values: values, sch: f.sch}, out)
}

func peekFunc(fn func(Tuple), sch *schema) func([]any) {
	return func(values []any) { fn(Tuple{values: values, sch: sch}) }
}

// Interfaces the adapters of this package implement for the processor.
var (
	_ exec.Function         = eachFunc{}
	_ exec.Predicate        = filterFunc{}
	_ exec.Mapper           = mapFunc{}
	_ exec.Function         = flatMapFunc{}
	_ exec.Aggregator       = (*aggregatorOf[int])(nil)
	_ exec.Persister        = (*persistCombiner[int])(nil)
	_ exec.Persister        = (*reduceOp[int])(nil)
	_ exec.Querier          = (*querierOf[int, int])(nil)
	_ exec.BatchAcc         = (*accOf[int])(nil)
	_ exec.KeyCounter       = (*accOf[int])(nil)
	_ exec.Aggregator       = (*preAggregator[int])(nil)
	_ exec.AggregateBatch   = (*accOf[int])(nil)
	_ exec.KeyCounter       = (*reduceBatch)(nil)
	_ exec.ClockedPersister = (*windowOp[int])(nil)
)
