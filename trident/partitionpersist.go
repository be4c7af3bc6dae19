package trident

import (
	"context"
	"fmt"
	"slices"

	"github.com/squallstream/squall/trident/internal/exec"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/txn"
)

// PartitionPersist writes each batch's tuples (the input fields) to state
// with updater, once per partition, in the batch's commit phase:
// BeginCommit(txid), UpdateState, Commit(txid). Empty batches do not touch
// state. What the updater emits forms the new-values stream, with fields
// outputs.
func PartitionPersist[S state.State](s *Stream, factory func(ctx context.Context, partition, numPartitions int) (S, error),
	input Fields, updater StateUpdater[S], outputs ...string) *State[S] {
	s.checkFields("PartitionPersist", input)
	if factory == nil || any(updater) == nil {
		s.t.errorf("PartitionPersist: nil state factory or updater")
	}
	p := &updaterOp[S]{factory: factory, updater: updater, input: s.n.sch.indexes(input), inSch: newSchema(slices.Clone(input))}
	n := &node{op: &exec.Persist{P: p, In: input}, parent: s.n, sch: newSchema(slices.Clone(outputs))}
	return &State[S]{t: s.t, n: s.t.add(n)}
}

type updaterOp[S state.State] struct {
	factory func(ctx context.Context, partition, numPartitions int) (S, error)
	updater StateUpdater[S]
	input   []int
	inSch   *schema
}

func (u *updaterOp[S]) Open(ctx context.Context, partition, numPartitions int) (exec.PersistTask, error) {
	st, err := u.factory(ctx, partition, numPartitions)
	if err != nil {
		return nil, err
	}
	if any(st) == nil {
		return nil, fmt.Errorf("trident: state factory returned nil for partition %d", partition)
	}
	return &updaterTask[S]{op: u, st: st}, nil
}

type updaterTask[S state.State] struct {
	op *updaterOp[S]
	st S
}

func (t *updaterTask[S]) State() any { return t.st }

// tupleBuffer keeps a batch's input tuples.
type tupleBuffer struct {
	idx    []int
	sch    *schema // the input fields
	tuples []Tuple
}

func (b *tupleBuffer) Add(values []any) error {
	b.tuples = append(b.tuples, project(values, b.idx, b.sch))
	return nil
}

func (t *updaterTask[S]) NewBatch() exec.BatchAcc {
	return &tupleBuffer{idx: t.op.input, sch: t.op.inSch}
}

func (t *updaterTask[S]) Commit(ctx context.Context, txid txn.TxID, acc exec.BatchAcc, out Collector) error {
	buf := acc.(*tupleBuffer)
	if len(buf.tuples) == 0 {
		return nil
	}
	if err := t.st.BeginCommit(ctx, txid); err != nil {
		return err
	}
	if err := t.op.updater.UpdateState(ctx, t.st, buf.tuples, out); err != nil {
		return err
	}
	return t.st.Commit(ctx, txid)
}
