package exec

import (
	"fmt"

	"github.com/squallstream/squall/trident/internal/plan"
	"github.com/squallstream/squall/trident/internal/runtime"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// Finish ends a batch: aggregations complete, joins and queries run and
// committers write it to state, in declaration order (so a node finishes
// after the nodes that feed it). The runtime then reports the batch
// downstream. The aggregations, joins and queries of a DRPC request that
// ended without an answer do not run; committers always do.
func (s *Processor) Finish(bt *runtime.Batch) error {
	s.committing = bt.Attempt
	data := bt.Data.(*batchData)
	for _, n := range s.stage.Nodes {
		op := s.op(n)
		if _, commits := op.(*Persist); !commits && s.abandoned(n, bt) {
			continue
		}
		switch op := op.(type) {
		case *Aggregate:
			a := s.aggregation(n, bt)
			err := a.Complete()
			data.aggs[n.ID] = nil
			recycle(a.AggregateBatch)
			if err != nil {
				return err
			}
			if err := a.takeEmitErr(); err != nil {
				return err
			}
		case *Join:
			if j := data.joins[n.ID]; j != nil {
				if err := j.run(func(v []any) error { return s.emitFrom(n, bt, v) }); err != nil {
					return err
				}
			}
		case *Query:
			if err := s.finishQuery(n, bt, data.queries[n.ID]); err != nil {
				return err
			}
		case *Persist:
			acc := data.accs[n.ID]
			if _, clocked := op.P.(ClockedPersister); acc == nil && !clocked {
				continue // a window runs on empty batches too: time passes
			}
			var emitErr error
			out := &collector{s: s, n: n, bt: bt, width: len(n.Fields), errp: &emitErr}
			err := s.persist[n.ID].Commit(s.ctx, bt.Attempt.TxID, acc, out)
			s.states.of(n.ID).committed(acc, err)
			data.accs[n.ID] = nil
			recycle(acc)
			if err != nil {
				return fmt.Errorf("%s: committing batch %v: %w", s.stage.Name, bt.Attempt, err)
			}
			if emitErr != nil {
				return emitErr
			}
		}
	}
	return nil
}

// finishQuery runs query node n's batch q (nil if no tuple came) on its
// state: the static state it opened, or the state its stage writes.
func (s *Processor) finishQuery(n *plan.Node, bt *runtime.Batch, q QueryBatch) error {
	if q == nil {
		return nil
	}
	st := s.static[n.ID]
	if n.State != nil {
		st = s.persist[n.State.ID].State()
	}
	var emitErr error
	reject := func(err error, values []any) error {
		if s.abandoned(n, bt) {
			return nil
		}
		return s.rejectedAt(n, bt, err, values)
	}
	if err := q.Run(s.ctxOf(n, bt), st, s.aggregateOut(n, bt, &emitErr), reject); err != nil {
		if s.abandoned(n, bt) {
			return nil // the request ended: its query's error is dropped
		}
		return err
	}
	return emitErr
}

// aggregation is an aggregation node's state for one batch, with the
// first error its collectors met.
type aggregation struct {
	AggregateBatch
	strings StringAdder // the batch, if it takes its group as a string
	emitErr error
}

// takeEmitErr returns the first error of an emit since the last call.
func (a *aggregation) takeEmitErr() error {
	err := a.emitErr
	if err != nil { // a store, even of nil, costs a write barrier while the GC marks
		a.emitErr = nil
	}
	return err
}

// aggregation returns node n's state for the batch.
func (s *Processor) aggregation(n *plan.Node, bt *runtime.Batch) *aggregation {
	if a := bt.Data.(*batchData).aggs[n.ID]; a != nil { // inlined: the commonest case
		return a
	}
	return s.newAggregation(n, bt)
}

// newAggregation starts node n's state for the batch.
func (s *Processor) newAggregation(n *plan.Node, bt *runtime.Batch) *aggregation {
	a := &aggregation{}
	a.AggregateBatch = s.op(n).(*Aggregate).Agg.NewBatch(bt.Attempt, s.aggregateOut(n, bt, &a.emitErr), s.getsBatch(bt.Attempt.TxID))
	a.strings, _ = a.AggregateBatch.(StringAdder)
	bt.Data.(*batchData).aggs[n.ID] = a
	return a
}

// getsBatch reports whether this task may receive tuples of batch txid:
// false in the tasks of a stage whose inputs send each batch to one other
// task (Global, BatchGlobal), which Storm gives no batch at all.
func (s *Processor) getsBatch(txid txn.TxID) bool {
	sole, ok := s.stage.SoleTask(uint64(txid), s.task.NumTasks)
	return !ok || sole == s.task.Index
}

// aggregateOut returns the collectors an aggregation or a query emits
// through: each emitted tuple is the group's values (a query's input
// tuple) followed by the emitted values. The first error of an emit is
// stored in *errp.
func (s *Processor) aggregateOut(n *plan.Node, bt *runtime.Batch, errp *error) func(group []any) spout.Collector {
	return func(group []any) spout.Collector {
		return &collector{s: s, n: n, bt: bt, base: group, width: len(n.Fields), errp: errp}
	}
}
