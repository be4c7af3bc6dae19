package trident

import (
	"context"

	"github.com/squallstream/squall/trident/internal/exec"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// Collector receives the tuples an operation emits. It is the one
// collector shape of the Trident layer: spouts emit into the same
// interface (spout.Collector), Emit(values...) and ReportError(err).
type Collector = spout.Collector

// Function turns each input tuple into zero or more output tuples. Each
// output tuple is the input tuple's values followed by the emitted values.
//
// A returned error marked with failure.Retryable or failure.Reported fails
// the batch, which is replayed; any other error stops the worker.
type Function interface {
	Execute(ctx context.Context, t Tuple, out Collector) error
}

// FunctionFunc adapts a function to Function.
type FunctionFunc func(ctx context.Context, t Tuple, out Collector) error

// Execute calls f.
func (f FunctionFunc) Execute(ctx context.Context, t Tuple, out Collector) error {
	return f(ctx, t, out)
}

// Filter keeps the tuples for which Keep returns true. Errors are treated
// as for Function.
type Filter interface {
	Keep(ctx context.Context, t Tuple) (bool, error)
}

// FilterFunc adapts a function to Filter.
type FilterFunc func(ctx context.Context, t Tuple) (bool, error)

// Keep calls f.
func (f FilterFunc) Keep(ctx context.Context, t Tuple) (bool, error) { return f(ctx, t) }

// CombinerAggregator aggregates by combining: every tuple becomes a value
// with Init, values combine pairwise with Combine, and Zero is the value of
// no tuples. Combine must be associative and must not modify its
// arguments. Init's errors are treated as for Function.
type CombinerAggregator[V any] interface {
	Init(t Tuple) (V, error)
	Combine(a, b V) V
	Zero() V
}

// MapFunction turns each tuple into exactly one tuple of new fields.
// Errors are treated as for Function.
type MapFunction interface {
	Map(ctx context.Context, t Tuple) ([]any, error)
}

// MapFunctionFunc adapts a function to MapFunction.
type MapFunctionFunc func(ctx context.Context, t Tuple) ([]any, error)

// Map calls f.
func (f MapFunctionFunc) Map(ctx context.Context, t Tuple) ([]any, error) { return f(ctx, t) }

// FlatMapFunction turns each tuple into zero or more tuples of new fields.
// Errors are treated as for Function.
type FlatMapFunction interface {
	FlatMap(ctx context.Context, t Tuple, out Collector) error
}

// FlatMapFunctionFunc adapts a function to FlatMapFunction.
type FlatMapFunctionFunc func(ctx context.Context, t Tuple, out Collector) error

// FlatMap calls f.
func (f FlatMapFunctionFunc) FlatMap(ctx context.Context, t Tuple, out Collector) error {
	return f(ctx, t, out)
}

// Aggregator is the general aggregator: Init starts a batch (or a group
// within a batch), Aggregate folds in one tuple, Complete emits the result.
// It may emit any number of tuples at any step. Errors are treated as for
// Function.
type Aggregator[S any] interface {
	Init(batch txn.Attempt, out Collector) (S, error)
	Aggregate(acc S, t Tuple, out Collector) (S, error)
	Complete(acc S, out Collector) error
}

// ReducerAggregator folds tuples into a value, starting from Init. Reduce
// must not modify acc in place if acc is shared (slices, maps): build a new
// value. Errors are treated as for Function.
type ReducerAggregator[V any] interface {
	Init() V
	Reduce(acc V, t Tuple) (V, error)
}

// QueryFunction reads state for a batch: BatchRetrieve gets one result per
// argument tuple in one call (so that a backend can batch its reads), then
// Execute runs once per tuple with its result and emits the output values,
// which are appended to the tuple. Errors are treated as for Function.
type QueryFunction[S, R any] interface {
	BatchRetrieve(ctx context.Context, st S, args []Tuple) ([]R, error)
	Execute(ctx context.Context, t Tuple, result R, out Collector) error
}

// StateUpdater writes a batch's tuples to state in the batch's commit
// phase; the values it emits form the updater's new-values stream. Errors
// are treated as for Function.
type StateUpdater[S any] interface {
	UpdateState(ctx context.Context, st S, tuples []Tuple, out Collector) error
}

// EmitString emits one string value through out: out.Emit(v), without
// the allocation that boxing v in an interface value costs when out is a
// collector of the runtime (a Function's, FlatMap's or Aggregator's). On a
// busy path, such as a function that splits sentences into words, that
// allocation and the garbage collection it causes can be most of the work.
func EmitString(out Collector, v string) {
	if exec.EmitString(out, v) { // the commonest case: a function's collector
		return
	}
	if se, ok := out.(stringEmitter); ok {
		se.EmitString(v)
		return
	}
	out.Emit(v)
}

// stringEmitter is a collector that emits strings without boxing them.
type stringEmitter interface{ EmitString(v string) }
