package trident

import (
	"slices"

	"github.com/squallstream/squall/trident/internal/exec"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/txn"
)

// PartitionAggregate aggregates each batch's tuples within each partition
// (task): agg sees the input fields; the output stream has the fields
// outputs, one tuple per value agg emits.
func PartitionAggregate[S any](s *Stream, input Fields, agg Aggregator[S], outputs ...string) *Stream {
	return aggregateNode(s, "PartitionAggregate", nil, input, agg, outputs)
}

// Aggregate aggregates all of each batch's tuples in one task.
func Aggregate[S any](s *Stream, input Fields, agg Aggregator[S], outputs ...string) *Stream {
	return aggregateNode(s.Global(), "Aggregate", nil, input, agg, outputs)
}

// AggregateGroups aggregates each batch's tuples per group: the output
// stream has the group fields followed by outputs.
func AggregateGroups[S any](g *GroupedStream, input Fields, agg Aggregator[S], outputs ...string) *Stream {
	return aggregateNode(g.s, "AggregateGroups", g.fields, input, agg, outputs)
}

func aggregateNode[S any](s *Stream, op string, group, input Fields, agg Aggregator[S], outputs []string) *Stream {
	s.checkFields(op, input)
	s.checkOutputs(op, outputs)
	if agg == nil {
		s.t.errorf("%s: nil aggregator", op)
	}
	for _, f := range outputs {
		if slices.Contains(group, f) {
			s.t.errorf("%s: output field %q is a group field", op, f)
		}
	}
	a := &aggregatorOf[S]{agg: agg, group: s.n.sch.indexes(group), input: exec.NewProjection(s.n.sch.indexes(input)), inSch: newSchema(slices.Clone(input))}
	return s.aggregated(group, outputs, a)
}

// aggregated returns the stream of aggregation a of s, whose fields are
// group followed by outputs.
func (s *Stream) aggregated(group Fields, outputs []string, a exec.Aggregator) *Stream {
	n := &node{op: &exec.Aggregate{Agg: a}, parent: s.n,
		sch: newSchema(append(slices.Clone(group), outputs...))}
	return &Stream{t: s.t, n: s.t.add(n)}
}

// Combining runs a CombinerAggregator as an Aggregator that emits the
// combined value of a batch (or group) once, in Complete.
func Combining[V any](c CombinerAggregator[V]) Aggregator[V] { return combining[V]{c} }

type combining[V any] struct{ c CombinerAggregator[V] }

func (a combining[V]) Init(txn.Attempt, Collector) (V, error) { return a.c.Zero(), nil }
func (a combining[V]) Aggregate(acc V, t Tuple, _ Collector) (V, error) {
	v, err := a.c.Init(t)
	if err != nil {
		return acc, err
	}
	return a.c.Combine(acc, v), nil
}
func (a combining[V]) Complete(acc V, out Collector) error { out.Emit(acc); return nil }
func (a combining[V]) BorrowsTuples() bool                 { return exec.Borrows(a.c) }

// Reducing runs a ReducerAggregator as an Aggregator that emits the reduced
// value of a batch (or group) once, in Complete.
func Reducing[V any](r ReducerAggregator[V]) Aggregator[V] { return reducing[V]{r} }

type reducing[V any] struct{ r ReducerAggregator[V] }

func (a reducing[V]) Init(txn.Attempt, Collector) (V, error)           { return a.r.Init(), nil }
func (a reducing[V]) Aggregate(acc V, t Tuple, _ Collector) (V, error) { return a.r.Reduce(acc, t) }
func (a reducing[V]) Complete(acc V, out Collector) error              { out.Emit(acc); return nil }
func (a reducing[V]) BorrowsTuples() bool                              { return exec.Borrows(a.r) }

// aggregatorOf runs an Aggregator for the processor (exec.Aggregator).
type aggregatorOf[S any] struct {
	agg   Aggregator[S]
	group []int
	input exec.Projection
	inSch *schema
}

func (a *aggregatorOf[S]) NewBatch(at txn.Attempt, out func(group []any) Collector, ofNothing bool) exec.AggregateBatch {
	b := &aggregateBatchOf[S]{op: a, agg: a.agg, group: a.group, input: a.input, inSch: a.inSch,
		attempt: at, out: out, ofNothing: ofNothing, groups: exec.NewGroupIndex[groupState[S]]()}
	b.newGroup = b.initGroup
	return b
}

func (a *aggregatorOf[S]) BorrowsTuples() bool { return exec.Borrows(a.agg) }

type groupState[S any] struct {
	group []any
	out   Collector // emits after the group's values
	acc   S
}

type aggregateBatchOf[S any] struct {
	op *aggregatorOf[S]
	// Copies of op's fields, which Add reads for every tuple: one
	// pointer fewer to follow.
	agg       Aggregator[S]
	group     []int
	input     exec.Projection
	inSch     *schema
	attempt   txn.Attempt
	out       func(group []any) Collector
	ofNothing bool // an ungrouped aggregation of no tuple completes once
	groups    exec.GroupIndex[groupState[S]]
	newGroup  func(group []any, _ state.Key) (*groupState[S], error) // initGroup, bound once per batch
}

func (b *aggregateBatchOf[S]) Add(values []any) error {
	g, _, err := b.groups.Find(values, b.group, b.newGroup)
	if err != nil {
		return err
	}
	acc, err := b.agg.Aggregate(g.acc, Tuple{values: b.input.Of(values), sch: b.inSch}, g.out)
	g.acc = acc
	return err
}

// initGroup starts a group of the batch.
func (b *aggregateBatchOf[S]) initGroup(group []any, _ state.Key) (*groupState[S], error) {
	out := b.out(group)
	acc, err := b.op.agg.Init(b.attempt, out)
	return &groupState[S]{group: group, out: out, acc: acc}, err
}

func (b *aggregateBatchOf[S]) Complete() error {
	if len(b.op.group) == 0 && len(b.groups.Order) == 0 && b.ofNothing {
		// An ungrouped aggregation of an empty batch still completes once,
		// from Init, as Storm's does (a count of nothing is 0): in every
		// task of a partition aggregation, in the one task of a global one.
		out := b.out(nil)
		acc, err := b.op.agg.Init(b.attempt, out)
		if err != nil {
			return err
		}
		b.groups.Order = append(b.groups.Order, &groupState[S]{out: out, acc: acc})
	}
	for _, g := range b.groups.Order {
		if err := b.op.agg.Complete(g.acc, g.out); err != nil {
			return err
		}
	}
	return nil
}
