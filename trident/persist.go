package trident

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/trident/internal/exec"
	"github.com/squallstream/squall/txn"
)

// StateFactory makes the map state of one partition (task) of a persistent
// aggregation. It is called again when a worker restarts, so a factory of
// in-memory state must keep the data outside the state it returns.
type StateFactory[V any] func(ctx context.Context, partition, numPartitions int) (state.MapState[V], error)

// State is state of type S that a topology writes (PersistentAggregate,
// PartitionPersist) or only reads (StaticState). StateQuery reads it.
type State[S any] struct {
	t      *Topology
	n      *node                                                              // the writing node; nil for static state
	open   func(ctx context.Context, partition, numPartitions int) (S, error) // static state only
	byKeys bool                                                               // queries are partitioned by their input fields (map state keyed by group)
}

// NewValuesStream is the stream of what each batch wrote, emitted in the
// batch's commit phase: for PersistentAggregate the group fields followed
// by the new value; for PartitionPersist what the updater emitted. It is
// empty for static state.
func (s *State[S]) NewValuesStream() *Stream {
	if s.n == nil {
		s.t.errorf("NewValuesStream: static state has no new values")
		return &Stream{t: s.t, n: s.t.add(&node{op: &exec.Project{}, sch: newSchema(nil)})}
	}
	return &Stream{t: s.t, n: s.n}
}

// PersistentAggregate keeps, for every group, the aggregate of the input
// fields of all its tuples in map state made by factory. Each batch is
// pre-aggregated per group and applied in the batch's commit phase, with
// the batch's txid: with opaque or transactional state every tuple counts
// exactly once, through replays and crashes.
func PersistentAggregate[V any](g *GroupedStream, factory StateFactory[V], input Fields, agg CombinerAggregator[V], output string) *State[state.MapState[V]] {
	return persistCombined(g.s, g.fields, factory, input, agg, output)
}

// PersistentAggregateGlobal keeps the aggregate of all of s's tuples under
// one key (state.GlobalKey) of map state made by factory, like
// PersistentAggregate without groups. The new-values stream has the one
// field output.
func PersistentAggregateGlobal[V any](s *Stream, factory StateFactory[V], input Fields, agg CombinerAggregator[V], output string) *State[state.MapState[V]] {
	return persistCombined(s.Global(), nil, factory, input, agg, output)
}

func persistCombined[V any](s *Stream, groupFields Fields, factory StateFactory[V], input Fields, agg CombinerAggregator[V], output string) *State[state.MapState[V]] {
	g := &GroupedStream{s: s, fields: groupFields}
	s.checkFields("PersistentAggregate", input)
	if factory == nil || agg == nil {
		s.t.errorf("PersistentAggregate: nil state factory or aggregator")
	}
	if slices.Contains(g.fields, output) {
		s.t.errorf("PersistentAggregate: output field %q is a group field", output)
	}
	if len(s.t.errs) == 0 {
		s, input, agg = preAggregate(s, groupFields, input, agg)
	}
	p := &persistCombiner[V]{factory: factory, combineInput: newCombineInput(s, agg, g.fields, input)}
	n := &node{op: &exec.Persist{P: p, In: input}, parent: s.n,
		sch: newSchema(append(slices.Clone(g.fields), output))}
	return &State[state.MapState[V]]{t: s.t, n: s.t.add(n), byKeys: true}
}

// preAggregate moves the combining of a grouped persistent aggregation in
// front of its repartition, as Storm does: each upstream task combines its
// share of a batch per group, and only one partial value per group and
// task crosses to the committer, which combines the partials. It returns
// the stream the committer reads, its input fields and its aggregator.
// Combine is associative, so the state sees the same values.
func preAggregate[V any](s *Stream, groupFields, input Fields, agg CombinerAggregator[V]) (*Stream, Fields, CombinerAggregator[V]) {
	part, ok := s.n.op.(*exec.Partition)
	if len(groupFields) == 0 || !ok || s.n.parent == nil {
		return s, input, agg
	}
	partial := "$partial" + strconv.Itoa(len(s.t.nodes))
	up := &Stream{t: s.t, n: s.n.parent}
	up.checkFields("PersistentAggregate", input)
	pre := up.aggregated(groupFields, []string{partial}, &preAggregator[V]{in: newCombineInput(up, agg, groupFields, input)})
	moved := pre.partition(part.How, part.Fields)
	moved.n.hint, moved.n.label = s.n.hint, s.n.label
	return moved, Fields{partial}, partials[V]{agg}
}

// combineInput is how a batch's tuples are combined per group: the
// combiner, the positions of the group fields and the projection of the
// input fields.
type combineInput[V any] struct {
	agg    CombinerAggregator[V]
	counts bool // agg counts tuples (TupleCounter): a group's value is its number of tuples
	group  []int
	input  exec.Projection
	inSch  *schema // the input fields
}

func newCombineInput[V any](s *Stream, agg CombinerAggregator[V], group, input Fields) combineInput[V] {
	return combineInput[V]{agg: agg, counts: countsTuples(agg), group: s.n.sch.indexes(group),
		input: exec.NewProjection(s.n.sch.indexes(input)), inSch: newSchema(slices.Clone(input))}
}

// preAggregator is the upstream half of preAggregate (an exec.Aggregator):
// it combines each group's values of a batch as the committer's batch
// does (accOf) and emits each group's combined value when the batch ends.
// A group all of whose tuples were rejected was never started, so it
// emits nothing and does not reach the state, as without pre-aggregation.
type preAggregator[V any] struct {
	in   combineInput[V]
	free recycled[accOf[V]]
}

func (p *preAggregator[V]) NewBatch(_ txn.Attempt, out func(group []any) Collector, _ bool) exec.AggregateBatch {
	a := newAcc(&p.in, &p.free)
	a.out = out
	return a
}

// newAcc returns a recycled batch from free, or a new one.
func newAcc[V any](in *combineInput[V], free *recycled[accOf[V]]) *accOf[V] {
	if a := free.get(); a != nil {
		return a
	}
	return &accOf[V]{in: in, groups: exec.NewGroupIndex[groupAcc[V]](), free: free}
}

// BorrowsTuples reports whether the combiner's Init borrows: the batch
// keeps only the detached group values and combined values.
func (p *preAggregator[V]) BorrowsTuples() bool { return exec.Borrows(p.in.agg) }

// GroupField returns the position of the only group field, if there is
// one (exec.StringGrouped): its batches, accOf, take it as a string.
func (p *preAggregator[V]) GroupField() (int, bool) {
	if len(p.in.group) != 1 {
		return 0, false
	}
	return p.in.group[0], true
}

// partials combines the partial values of preAggregate.
type partials[V any] struct{ c CombinerAggregator[V] }

func (p partials[V]) Init(t Tuple) (V, error) { return t.Value(0).(V), nil }
func (p partials[V]) Combine(a, b V) V        { return p.c.Combine(a, b) }
func (p partials[V]) Zero() V                 { return p.c.Zero() }

// persistCombiner runs PersistentAggregate for the processor
// (exec.Persister).
type persistCombiner[V any] struct {
	factory StateFactory[V]
	combineInput[V]
	free recycled[accOf[V]]
}

// BorrowsTuples reports whether the combiner's Init borrows: the batch's
// accumulator keeps only the detached group values and combined values.
func (p *persistCombiner[V]) BorrowsTuples() bool { return exec.Borrows(p.agg) }

func (p *persistCombiner[V]) Open(ctx context.Context, partition, numPartitions int) (exec.PersistTask, error) {
	ms, err := openMapState(ctx, p.factory, partition, numPartitions)
	if err != nil {
		return nil, err
	}
	return &persistTaskOf[V]{op: p, ms: ms}, nil
}

// openMapState makes a partition's map state, refusing a nil one.
func openMapState[V any](ctx context.Context, f StateFactory[V], partition, numPartitions int) (state.MapState[V], error) {
	ms, err := f(ctx, partition, numPartitions)
	if err != nil {
		return nil, err
	}
	if ms == nil {
		return nil, fmt.Errorf("trident: state factory returned nil for partition %d", partition)
	}
	return ms, nil
}

type persistTaskOf[V any] struct {
	op *persistCombiner[V]
	ms state.MapState[V]
}

func (t *persistTaskOf[V]) State() any { return t.ms }

type groupAcc[V any] struct {
	key   state.Key
	group []any
	val   V
	// n is the group's tuples, when they are counted (combineInput.counts);
	// counting into val instead would need a type assertion per tuple
	// (V is int64 then), which cost 0.5 % of the word count at p1 and 1.5 %
	// at p2.
	n int64
}

// accOf combines a batch's values per group: a committer's batch
// (exec.BatchAcc), or a pre-aggregation's (exec.AggregateBatch), which
// emits each group's value through out when the batch ends.
type accOf[V any] struct {
	in     *combineInput[V]
	groups exec.GroupIndex[groupAcc[V]]
	out    func(group []any) Collector // a pre-aggregation's
	free   *recycled[accOf[V]]         // where Recycle returns the batch
}

func (t *persistTaskOf[V]) NewBatch() exec.BatchAcc {
	return newAcc(&t.op.combineInput, &t.op.free)
}

func (a *accOf[V]) Add(values []any) error {
	if a.in.counts {
		g, _, err := a.groups.Find(values, a.in.group, newGroupAcc[V])
		return countIn(g, err)
	}
	v, err := a.in.agg.Init(Tuple{values: a.in.input.Of(values), sch: a.in.inSch})
	if err != nil {
		return err
	}
	g, created, err := a.groups.Find(values, a.in.group, newGroupAcc[V])
	return a.combine(g, created, v, err)
}

// AddString is Add for a tuple whose only group field holds s (a
// pre-aggregation's batch; exec.StringAdder).
func (a *accOf[V]) AddString(values []any, s string) error {
	if a.in.counts {
		g, _, err := a.groups.FindString(s, values, a.in.group, newGroupAcc[V])
		return countIn(g, err)
	}
	v, err := a.in.agg.Init(Tuple{values: a.in.input.Of(values), sch: a.in.inSch})
	if err != nil {
		return err
	}
	g, created, err := a.groups.FindString(s, values, a.in.group, newGroupAcc[V])
	return a.combine(g, created, v, err)
}

// countIn counts a tuple of group g, found or created with err, when the
// aggregator counts tuples: Init would have been 1, Combine an addition.
func countIn[V any](g *groupAcc[V], err error) error {
	if err != nil {
		return err
	}
	g.n++
	return nil
}

// value returns group g's combined value: its number of tuples, when they
// were counted.
func (a *accOf[V]) value(g *groupAcc[V]) V {
	if a.in.counts {
		return any(g.n).(V)
	}
	return g.val
}

// combine combines v, a tuple's value, into group g, found or created
// with err.
func (a *accOf[V]) combine(g *groupAcc[V], created bool, v V, err error) error {
	if err != nil {
		return err
	}
	if created {
		g.val = v
	} else {
		g.val = a.in.agg.Combine(g.val, v)
	}
	return nil
}

// Complete emits each group's combined value after its group values, in
// the order the groups appeared (a pre-aggregation's batch).
func (a *accOf[V]) Complete() error {
	for _, g := range a.groups.Order {
		a.out(g.group).Emit(a.value(g))
	}
	return nil
}

// Recycle empties the batch and returns it to the pre-aggregator or the
// persistent aggregation that made it, for a later batch
// (exec.Recycler): the storage its group index grew to (maps, the cache
// of recent strings) serves again instead of becoming garbage with every
// batch. The groups themselves are not reused.
func (a *accOf[V]) Recycle() {
	a.groups.Reset()
	a.out = nil
	a.free.put(a)
}

// newGroupAcc starts a group of a batch, without a value yet.
func newGroupAcc[V any](group []any, key state.Key) (*groupAcc[V], error) {
	return &groupAcc[V]{key: key, group: group}, nil
}

func (t *persistTaskOf[V]) Commit(ctx context.Context, txid txn.TxID, acc exec.BatchAcc, out Collector) error {
	a := acc.(*accOf[V])
	order := a.groups.Order
	if len(order) == 0 {
		return nil // as in Storm, empty batches do not touch state
	}
	keys := make([]state.Key, len(order))
	updaters := make([]state.ValueUpdater[V], len(order))
	combiner := state.CombinerFunc[V](t.op.agg.Combine)
	for i, g := range order {
		keys[i] = g.key
		updaters[i] = state.Combine[V](combiner, a.value(g))
	}
	if err := t.ms.BeginCommit(ctx, txid); err != nil {
		return err
	}
	vals, err := t.ms.MultiUpdate(ctx, keys, updaters)
	if err != nil {
		return err
	}
	if err := t.ms.Commit(ctx, txid); err != nil {
		return err
	}
	for i, g := range order {
		out.Emit(append(slices.Clone(g.group), vals[i])...)
	}
	return nil
}
