package exec

import (
	"context"

	"github.com/squallstream/squall/internal/clock"
	"github.com/squallstream/squall/trident/internal/plan"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// Op is what a node of the declared graph does: one type per kind of
// operation, each with only its own fields. Package trident builds them;
// the processor switches on their type.
type Op interface {
	// Kind names the operation in a printed plan.
	Kind() string
}

// Source reads a stream from a source; it starts a stage.
type Source struct{}

// Each runs a function on its input fields (In) and appends what it
// emits to the tuple.
type Each struct {
	Fn Function
	In []string
}

// Filter keeps the tuples its predicate keeps.
type Filter struct{ Fn Predicate }

// Map replaces each tuple by the values its mapper returns.
type Map struct{ Fn Mapper }

// FlatMap replaces each tuple by the tuples its function emits.
type FlatMap struct{ Fn Function }

// Peek calls Fn with each tuple and passes it on.
type Peek struct{ Fn func(values []any) }

// Project keeps the values at Idx of the parent's tuple.
type Project struct{ Idx []int }

// Partition is a repartition: it starts a stage, which receives the
// parent's tuples partitioned How (by Fields for plan.ByFields).
type Partition struct {
	How    plan.Partitioning
	Fields []string
}

// Merge is the union of its node's parents; it starts a stage.
type Merge struct{}

// Aggregate aggregates each batch (per group), emitting at its end.
type Aggregate struct{ Agg Aggregator }

// Persist writes each batch to state in the batch's commit phase; its
// stage is a committer. In names its input fields.
type Persist struct {
	P  Persister
	In []string
}

// Query queries state in the batch's commit phase. It runs in the stage
// of the node that writes the state (the plan node's State), or, for
// static state (Static not nil), in its parent's.
type Query struct {
	Q      Querier
	In     []string // input fields
	State  int      // the id of the node that writes the state; -1 for static state
	ByKeys bool     // route by the input fields (map state keyed by group)
	Static func(ctx context.Context, partition, numPartitions int) (any, error)
}

// Join joins its node's two parents by keys; it starts a stage.
type Join struct {
	Plan *JoinPlan
	Keys [2][]string // the keys of each side
}

func (*Source) Kind() string    { return "source" }
func (*Each) Kind() string      { return "each" }
func (*Filter) Kind() string    { return "filter" }
func (*Map) Kind() string       { return "map" }
func (*FlatMap) Kind() string   { return "flatMap" }
func (*Peek) Kind() string      { return "peek" }
func (*Project) Kind() string   { return "project" }
func (*Partition) Kind() string { return "partition" }
func (*Merge) Kind() string     { return "merge" }
func (*Aggregate) Kind() string { return "aggregate" }
func (*Persist) Kind() string   { return "persist" }
func (*Query) Kind() string     { return "query" }
func (*Join) Kind() string      { return "join" }

// Function runs a user's function on a tuple of its parent (values) and
// emits to out: an Each appends what it emits to the tuple, a FlatMap
// emits whole tuples.
type Function interface {
	Execute(ctx context.Context, values []any, out spout.Collector) error
}

// Predicate is a user's filter over a tuple of its parent.
type Predicate interface {
	Keep(ctx context.Context, values []any) (bool, error)
}

// Mapper is a user's map over a tuple of its parent: it returns the
// values of the new tuple.
type Mapper interface {
	Map(ctx context.Context, values []any) ([]any, error)
}

// Aggregator is the type-erased aggregation of a node.
type Aggregator interface {
	// NewBatch returns one batch's aggregation state; out(group) is the
	// collector a group's results are emitted through. ofNothing is
	// false in a task that gets no tuple of the batch by construction
	// (the other tasks of a global aggregation): an ungrouped
	// aggregation of nothing emits nothing there.
	NewBatch(a txn.Attempt, out func(group []any) spout.Collector, ofNothing bool) AggregateBatch
	// BorrowsTuples reports whether the aggregator keeps nothing of the
	// tuples it is passed (trident.TupleBorrower).
	BorrowsTuples() bool
}

// AggregateBatch is one batch's aggregation state in one task.
type AggregateBatch interface {
	// Add folds a tuple of the parent (values) into its group.
	Add(values []any) error
	// Complete ends every group, in the order they appeared.
	Complete() error
}

// Recycler is an AggregateBatch or a BatchAcc that can hand its storage
// to a later batch: the processor calls Recycle once it is done with the
// batch (after Complete, or after Commit and its counts), whatever their
// outcome, and never uses the batch again.
type Recycler interface {
	Recycle()
}

// recycle recycles batch b if it is a Recycler.
func recycle(b any) {
	if r, ok := b.(Recycler); ok {
		r.Recycle()
	}
}

// Persister is the type-erased persistent aggregation or update of a
// node. One that also borrows tuples implements BorrowsTuples() bool.
type Persister interface {
	Open(ctx context.Context, partition, numPartitions int) (PersistTask, error)
}

// ClockedPersister is a persister that reads the topology's clock (a
// window); it runs on empty batches too, since time passes.
type ClockedPersister interface {
	OpenClocked(ctx context.Context, partition, numPartitions int, clk clock.Clock) (PersistTask, error)
}

// PersistTask is one task's share of a persistent aggregation.
type PersistTask interface {
	// State returns the task's state, for queries.
	State() any
	// NewBatch returns the per-batch accumulator.
	NewBatch() BatchAcc
	// Commit applies the batch to state with txid and emits what changed
	// (for a persistent aggregation, every changed group with its new
	// value) to out.
	Commit(ctx context.Context, txid txn.TxID, acc BatchAcc, out spout.Collector) error
}

// BatchAcc accumulates one batch of a persistent node's input.
type BatchAcc interface {
	Add(values []any) error
}

// KeyCounter is a batch accumulator of map state: the number of keys its
// commit updates, which the state's counters add up.
type KeyCounter interface {
	KeyCount() int
}

// Querier is the type-erased query of a node.
type Querier interface {
	NewBatch() QueryBatch
	// EveryPartition reports whether every partition of the state
	// answers each tuple.
	EveryPartition() bool
}

// QueryBatch is one batch's query arguments in one task.
type QueryBatch interface {
	Add(values []any)
	// Run queries st and emits, for each tuple, through out(tuple); an
	// Execute error is passed to handle with the tuple, which returns what
	// remains of it (nil for a rejected tuple).
	Run(ctx context.Context, st any, out func(base []any) spout.Collector, handle func(err error, values []any) error) error
}
