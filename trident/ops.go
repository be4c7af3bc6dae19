package trident

import "context"

// Collector receives the tuples an operation emits.
type Collector interface {
	// Emit emits one tuple. The values must not be modified afterwards.
	Emit(values ...any)
	// ReportError shows err to operators without failing the batch.
	ReportError(err error)
}

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
