package trident

import (
	"fmt"

	"github.com/squallstream/squall/trident/internal/runtime"
	"github.com/squallstream/squall/txn"
)

// Finish ends a batch: aggregations complete, joins and queries run and
// committers write it to state, in declaration order (so a node finishes
// after the nodes that feed it). The runtime then reports the batch
// downstream. The aggregations, joins and queries of a DRPC request that
// ended without an answer do not run; committers always do.
func (s *stageTask) Finish(bt *runtime.Batch) error {
	s.committing = bt.Attempt
	data := bt.Data.(*batchData)
	for _, pn := range s.stage.Nodes {
		n := nodeOf(pn)
		if _, commits := n.op.(*persistOp); !commits && s.abandoned(n, bt) {
			continue
		}
		switch op := n.op.(type) {
		case *aggregateOp:
			a := s.aggregation(n, bt)
			if err := a.complete(); err != nil {
				return err
			}
			if err := a.takeEmitErr(); err != nil {
				return err
			}
		case *joinOp:
			if j := data.joins[n]; j != nil {
				if err := j.run(func(v []any) error { return s.emitFrom(n, bt, v) }); err != nil {
					return err
				}
			}
		case *queryOp:
			q := data.queries[n]
			if q == nil {
				continue
			}
			st := s.static[n]
			if op.state != nil {
				st = s.persist[op.state].state()
			}
			var emitErr error
			reject := func(err error, values []any) error {
				if s.abandoned(n, bt) {
					return nil
				}
				return s.rejectedAt(n, bt, err, values)
			}
			if err := q.run(s.ctxOf(n, bt), st, s.aggregateOut(n, bt, &emitErr), reject); err != nil {
				if s.abandoned(n, bt) {
					continue // the request ended: its query's error is dropped
				}
				return err
			}
			if emitErr != nil {
				return emitErr
			}
		case *persistOp:
			acc := data.accs[n.id]
			if _, isWindow := op.p.(windowPersister); acc == nil && !isWindow {
				continue // a window runs on empty batches too: time passes
			}
			var emitErr error
			out := &eachCollector{s: s, n: n, bt: bt, width: len(n.sch.fields), errp: &emitErr}
			err := s.persist[n].commit(s.ctx, bt.Attempt.TxID, acc, out)
			s.states.of(n).committed(acc, err)
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

// aggregation is an aggregation node's state for one batch, with the
// first error its collectors met.
type aggregation struct {
	aggregateBatch
	emitErr error
}

// takeEmitErr returns the first error of an emit since the last call.
func (a *aggregation) takeEmitErr() error {
	err := a.emitErr
	a.emitErr = nil
	return err
}

// aggregation returns node n's state for the batch.
func (s *stageTask) aggregation(n *node, bt *runtime.Batch) *aggregation {
	aggs := bt.Data.(*batchData).aggs
	a := aggs[n.id]
	if a == nil {
		a = &aggregation{}
		a.aggregateBatch = n.op.(*aggregateOp).agg.newBatch(bt.Attempt, s.aggregateOut(n, bt, &a.emitErr), s.getsBatch(bt.Attempt.TxID))
		aggs[n.id] = a
	}
	return a
}

// getsBatch reports whether this task may receive tuples of batch txid:
// false in the tasks of a stage whose inputs send each batch to one other
// task (Global, BatchGlobal), which Storm gives no batch at all.
func (s *stageTask) getsBatch(txid txn.TxID) bool {
	sole, ok := s.stage.SoleTask(uint64(txid), s.task.NumTasks)
	return !ok || sole == s.task.Index
}

// aggregateOut returns the collectors an aggregation emits through: each
// emitted tuple is the GroupBy group's values followed by the emitted
// values. The
// first error of an emit is stored in *errp.
func (s *stageTask) aggregateOut(n *node, bt *runtime.Batch, errp *error) func(group []any) Collector {
	return func(group []any) Collector {
		return &eachCollector{s: s, n: n, bt: bt, base: group, width: len(n.sch.fields), errp: errp}
	}
}
