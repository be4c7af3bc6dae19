package trident

import (
	"context"
	"fmt"
	"slices"

	"github.com/squallstream/squall/trident/internal/exec"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/txn"
)

// PersistentReduce keeps, for every group, the fold of all its tuples (the
// input fields) with r, in map state made by factory: each batch's tuples
// are folded into the stored value (or r.Init() for a new group) in the
// batch's commit phase. Reduce must build a new value rather than modify
// the one it is given in place.
func PersistentReduce[V any](g *GroupedStream, factory StateFactory[V], input Fields, r ReducerAggregator[V], output string) *State[state.MapState[V]] {
	s := g.s
	s.checkFields("PersistentReduce", input)
	if factory == nil || any(r) == nil {
		s.t.errorf("PersistentReduce: nil state factory or reducer")
	}
	if slices.Contains(g.fields, output) {
		s.t.errorf("PersistentReduce: output field %q is a group field", output)
	}
	op := &reduceOp[V]{factory: factory, r: r, group: s.n.sch.indexes(g.fields), input: s.n.sch.indexes(input),
		inSch: newSchema(slices.Clone(input))}
	n := &node{op: &exec.Persist{P: op, In: input}, parent: s.n,
		sch: newSchema(append(slices.Clone(g.fields), output))}
	return &State[state.MapState[V]]{t: s.t, n: s.t.add(n), byKeys: true}
}

type reduceOp[V any] struct {
	factory StateFactory[V]
	r       ReducerAggregator[V]
	group   []int
	input   []int
	inSch   *schema
}

func (o *reduceOp[V]) Open(ctx context.Context, partition, numPartitions int) (exec.PersistTask, error) {
	ms, err := openMapState(ctx, o.factory, partition, numPartitions)
	if err != nil {
		return nil, err
	}
	return &reduceTask[V]{op: o, ms: ms}, nil
}

type reduceTask[V any] struct {
	op *reduceOp[V]
	ms state.MapState[V]
}

func (t *reduceTask[V]) State() any { return t.ms }

type reduceGroup struct {
	key    state.Key
	group  []any
	tuples []Tuple
}

type reduceBatch struct {
	group  []int
	input  []int
	inSch  *schema
	groups exec.GroupIndex[reduceGroup]
}

func (t *reduceTask[V]) NewBatch() exec.BatchAcc {
	return &reduceBatch{group: t.op.group, input: t.op.input, inSch: t.op.inSch, groups: exec.NewGroupIndex[reduceGroup]()}
}

func (b *reduceBatch) Add(values []any) error {
	g, _, err := b.groups.Find(values, b.group, func(group []any, key state.Key) (*reduceGroup, error) {
		return &reduceGroup{key: key, group: group}, nil
	})
	if err != nil {
		return err
	}
	g.tuples = append(g.tuples, project(values, b.input, b.inSch))
	return nil
}

func (t *reduceTask[V]) Commit(ctx context.Context, txid txn.TxID, acc exec.BatchAcc, out Collector) error {
	b := acc.(*reduceBatch)
	if len(b.groups.Order) == 0 {
		return nil
	}
	// Fold every group from Init first, so that a tuple Reduce refuses
	// fails the batch before anything is written (a transactional map
	// would otherwise keep a half-applied batch: it skips the replay).
	for _, g := range b.groups.Order {
		acc := t.op.r.Init()
		for _, tu := range g.tuples {
			next, err := t.op.r.Reduce(acc, tu)
			if err != nil {
				return err
			}
			acc = next
		}
	}
	var reduceErr error
	keys := make([]state.Key, len(b.groups.Order))
	updaters := make([]state.ValueUpdater[V], len(b.groups.Order))
	for i, g := range b.groups.Order {
		keys[i] = g.key
		updaters[i] = state.ValueUpdaterFunc[V](func(old V, found bool) V {
			if !found {
				old = t.op.r.Init()
			}
			for _, tu := range g.tuples {
				next, err := t.op.r.Reduce(old, tu)
				if err != nil && reduceErr == nil {
					reduceErr = err
				}
				old = next
			}
			return old
		})
	}
	if err := t.ms.BeginCommit(ctx, txid); err != nil {
		return err
	}
	vals, err := t.ms.MultiUpdate(ctx, keys, updaters)
	if err != nil {
		return err
	}
	if reduceErr != nil {
		// Reduce accepted the tuples from Init but not from the stored
		// value, after the values were written: stop rather than commit.
		return fmt.Errorf("trident: PersistentReduce failed after its state write, which may be half-applied: %w", reduceErr)
	}
	if err := t.ms.Commit(ctx, txid); err != nil {
		return err
	}
	for i, g := range b.groups.Order {
		out.Emit(append(slices.Clone(g.group), vals[i])...)
	}
	return nil
}
