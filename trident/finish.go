package trident

import (
	"fmt"

	"github.com/squallstream/squall/topology"
)

// finish ends a batch: aggregations complete and committers write it to
// state, in declaration order (so a node finishes after the nodes that feed
// it), then every downstream task is told how many tuples it was sent,
// anchored to anchor.
func (b *groupBolt) finish(bt *batch, anchor *topology.Tuple) error {
	b.committing = bt.attempt
	for _, n := range b.g.nodes {
		switch op := n.op.(type) {
		case *aggregateOp:
			a := b.aggregation(n, bt)
			if err := a.complete(); err != nil {
				return err
			}
			if err := a.takeEmitErr(); err != nil {
				return err
			}
		case *joinOp:
			if j := bt.joins[n]; j != nil {
				if err := j.run(func(v []any) error { return b.emitFrom(n, bt, v) }); err != nil {
					return err
				}
			}
		case *queryOp:
			q := bt.queries[n]
			if q == nil {
				continue
			}
			st := b.static[n]
			if op.state != nil {
				st = b.persist[op.state].state()
			}
			var emitErr error
			reject := func(err error, values []any) error { return b.rejected(err, bt.attempt, n.parent.sch.fields, values) }
			if err := q.run(b.ctx, st, b.aggregateOut(n, bt, &emitErr), reject); err != nil {
				return err
			}
			if emitErr != nil {
				return emitErr
			}
		case *persistOp:
			acc := bt.accs[n]
			if acc == nil {
				continue
			}
			var emitErr error
			out := &eachCollector{b: b, n: n, bt: bt, width: len(n.sch.fields), errp: &emitErr}
			if err := b.persist[n].commit(b.ctx, bt.attempt.TxID, acc, out); err != nil {
				return fmt.Errorf("%s: committing batch %v: %w", b.g.name, bt.attempt, err)
			}
			if emitErr != nil {
				return emitErr
			}
		}
	}
	for _, task := range b.downstream {
		b.out.EmitDirect(task, streamCoord, topology.Values{bt.attempt, bt.sent[task]}, anchor)
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
func (b *groupBolt) aggregation(n *node, bt *batch) *aggregation {
	a := bt.aggs[n]
	if a == nil {
		a = &aggregation{}
		a.aggregateBatch = n.op.(*aggregateOp).agg.newBatch(bt.attempt, b.aggregateOut(n, bt, &a.emitErr))
		bt.aggs[n] = a
	}
	return a
}

// aggregateOut returns the collectors an aggregation emits through: each
// emitted tuple is the group's values followed by the emitted values. The
// first error of an emit is stored in *errp.
func (b *groupBolt) aggregateOut(n *node, bt *batch, errp *error) func(group []any) Collector {
	return func(group []any) Collector {
		return &eachCollector{b: b, n: n, bt: bt, base: group, width: len(n.sch.fields), errp: errp}
	}
}
