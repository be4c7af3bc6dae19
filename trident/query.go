package trident

import (
	"context"
	"fmt"
	"slices"

	"github.com/squallstream/squall/trident/internal/exec"
)

// StaticState is state the topology only reads, made per task by open (for
// example a lookup table). Query it with StateQuery.
func StaticState[S any](t *Topology, open func(ctx context.Context, partition, numPartitions int) (S, error)) *State[S] {
	if open == nil {
		t.errorf("StaticState: nil open function")
	}
	return &State[S]{t: t, open: open}
}

// StateQuery reads st for each batch of s: q.BatchRetrieve gets the input
// fields of all the batch's tuples in one call, then q.Execute emits, for
// each tuple, values named outputs that are appended to it.
//
// A query of state the topology writes runs in the tasks that hold the
// state, in the batch's commit phase, after the batch's own writes. Which
// partitions (tasks) of the state answer a tuple:
//
//   - every partition, each from its own share of the state, when s is
//     made by Broadcast() (Storm's broadcast().stateQuery(...), the way
//     to collect what all partitions hold) or q asks for it
//     (EveryPartition, as ops.TupleCollectionGet does);
//   - otherwise the partition that holds the tuple's key (the input
//     fields), for state made by PersistentAggregate,
//     PersistentAggregateGlobal and PersistentReduce;
//   - otherwise any one partition (shuffle).
//
// A Broadcast() read only by state queries adds no stage (and ignores a
// parallelism hint): its tuples go from the tasks of the stream it
// broadcasts straight to every task of the state. A Broadcast() that
// other operations read too is a stage of its own, each of whose tasks
// sends its copy of a tuple to every partition: keep its parallelism 1. A query of static
// state runs where s runs, as soon as the batch is complete.
func StateQuery[S, R any](s *Stream, st *State[S], input Fields, q QueryFunction[S, R], outputs ...string) *Stream {
	s.checkFields("StateQuery", input)
	s.checkOutputs("StateQuery", outputs)
	if st == nil || any(q) == nil {
		s.t.errorf("StateQuery: nil state or query function")
		st = &State[S]{t: s.t}
	}
	if st.t != s.t {
		s.t.errorf("StateQuery: the state belongs to another topology")
	}
	for _, f := range outputs {
		if slices.Contains(s.n.sch.fields, f) {
			s.t.errorf("StateQuery: output field %q clashes with an existing field (stream fields: %v)", f, s.n.sch.fields)
		}
	}
	op := &querierOf[S, R]{q: q, input: s.n.sch.indexes(input), inSch: newSchema(slices.Clone(input)), parentSch: s.n.sch}
	if e, ok := any(q).(EveryPartition); ok {
		op.every = e.EveryPartition()
	}
	qo := &exec.Query{Q: op, In: input, State: -1, ByKeys: st.byKeys}
	if st.n != nil {
		qo.State = st.n.id
	}
	if st.n == nil && st.open != nil {
		qo.Static = func(ctx context.Context, p, np int) (any, error) { return st.open(ctx, p, np) }
	}
	n := &node{op: qo, parent: s.n, sch: newSchema(append(slices.Clone(s.n.sch.fields), outputs...))}
	return &Stream{t: s.t, n: s.t.add(n)}
}

// EveryPartition is implemented by query functions that, like Storm's
// TupleCollectionGet, read what a whole state holds rather than a key:
// when EveryPartition returns true, StateQuery sends each tuple to every
// partition of written state, as after Broadcast(), and each partition
// answers from its own share. It is optional, found by type assertion.
type EveryPartition interface {
	EveryPartition() bool
}

// querierOf runs a QueryFunction for the processor (exec.Querier).
type querierOf[S, R any] struct {
	q         QueryFunction[S, R]
	input     []int
	inSch     *schema
	parentSch *schema
	every     bool // the query function asks every partition
}

func (o *querierOf[S, R]) NewBatch() exec.QueryBatch { return &queryBatchOf[S, R]{op: o} }

func (o *querierOf[S, R]) EveryPartition() bool { return o.every }

type queryBatchOf[S, R any] struct {
	op    *querierOf[S, R]
	bases [][]any
	args  []Tuple
}

func (b *queryBatchOf[S, R]) Add(values []any) {
	b.bases = append(b.bases, values)
	b.args = append(b.args, project(values, b.op.input, b.op.inSch))
}

func (b *queryBatchOf[S, R]) Run(ctx context.Context, st any, out func([]any) Collector, handle func(error, []any) error) error {
	if len(b.args) == 0 {
		return nil
	}
	s, ok := st.(S)
	if !ok {
		return fmt.Errorf("trident: state query needs state of type %T, the state is %T", *new(S), st)
	}
	results, err := b.op.q.BatchRetrieve(ctx, s, b.args)
	if err != nil {
		return err
	}
	if len(results) != len(b.args) {
		return fmt.Errorf("trident: BatchRetrieve returned %d results for %d tuples", len(results), len(b.args))
	}
	for i, r := range results {
		t := Tuple{values: b.bases[i], sch: b.op.parentSch}
		if err := b.op.q.Execute(ctx, t, r, out(b.bases[i])); err != nil {
			if err := handle(err, b.bases[i]); err != nil {
				return err
			}
		}
	}
	return nil
}
