package exec

import (
	"fmt"

	"github.com/squallstream/squall/trident/internal/plan"
	"github.com/squallstream/squall/trident/internal/runtime"
)

// emitFrom passes a tuple that node n produced to n's children in this
// stage and, if n feeds other stages, emits it on n's data stream (the
// runtime counts it for every task it goes to).
func (s *Processor) emitFrom(n *plan.Node, bt *runtime.Batch, values []any) error {
	o := &s.fanouts[n.ID]
	for _, c := range o.local {
		if err := s.process(c, bt, values); err != nil {
			return err
		}
	}
	if o.stream != "" {
		bt.Emit(o.stream, values)
	}
	return nil
}

// process runs node n on a tuple of its parent. A tuple the node's
// operation rejects goes to the dead letters.
//
// For a DRPC request that ended without an answer, the tuple goes no
// further and an error of its work is dropped.
func (s *Processor) process(n *plan.Node, bt *runtime.Batch, values []any) error {
	if s.abandoned(n, bt) {
		return nil
	}
	return s.handle(n, bt, values, s.apply(n, bt, values))
}

// handle returns what err, the error of node n's operation on a tuple,
// does to the batch: nil if there was none or n's DRPC request ended
// without an answer, nil if the tuple went to the dead letters, else err.
func (s *Processor) handle(n *plan.Node, bt *runtime.Batch, values []any, err error) error {
	if err == nil { // inlined: the commonest case
		return nil
	}
	return s.failed(n, bt, values, err)
}

func (s *Processor) failed(n *plan.Node, bt *runtime.Batch, values []any, err error) error {
	if s.abandoned(n, bt) {
		return nil
	}
	return s.rejectedAt(n, bt, err, values)
}

func (s *Processor) apply(n *plan.Node, bt *runtime.Batch, values []any) error {
	switch op := s.op(n).(type) {
	case *Each:
		c := s.collector(n, bt, values)
		if err := op.Fn.Execute(s.ctxOf(n, bt), values, c); err != nil {
			return err
		}
		return c.err
	case *Filter:
		keep, err := op.Fn.Keep(s.ctxOf(n, bt), values)
		if err != nil || !keep {
			return err
		}
		return s.emitFrom(n, bt, values)
	case *Map:
		out, err := op.Fn.Map(s.ctxOf(n, bt), values)
		if err != nil {
			return err
		}
		if len(out) != len(n.Fields) {
			return fmt.Errorf("trident: Map returned %d values for fields %v", len(out), n.Fields)
		}
		return s.emitFrom(n, bt, out)
	case *FlatMap:
		c := s.collector(n, bt, nil)
		if err := op.Fn.Execute(s.ctxOf(n, bt), values, c); err != nil {
			return err
		}
		return c.err
	case *Peek:
		op.Fn(values)
		return s.emitFrom(n, bt, values)
	case *Project:
		return s.emitFrom(n, bt, ProjectValues(values, op.Idx))
	case *Aggregate:
		return s.aggregate(n, bt, values)
	case *Query:
		queries := bt.Data.(*batchData).queries
		q := queries[n.ID]
		if q == nil {
			q = op.Q.NewBatch()
			queries[n.ID] = q
		}
		q.Add(values)
		return nil
	case *Persist:
		return s.accumulate(n, bt, values)
	default:
		return s.emitFrom(n, bt, values)
	}
}

// aggregate adds a tuple to aggregation node n's batch.
func (s *Processor) aggregate(n *plan.Node, bt *runtime.Batch, values []any) error {
	a := s.aggregation(n, bt)
	if err := a.Add(values); err != nil {
		return err
	}
	return a.takeEmitErr()
}

// accumulate adds a tuple to persistent node n's batch.
func (s *Processor) accumulate(n *plan.Node, bt *runtime.Batch, values []any) error {
	acc := bt.Data.(*batchData).accs[n.ID]
	if acc == nil {
		acc = s.newAcc(n, bt)
	}
	return acc.Add(values)
}

// newAcc starts persistent node n's batch.
func (s *Processor) newAcc(n *plan.Node, bt *runtime.Batch) BatchAcc {
	acc := s.persist[n.ID].NewBatch()
	bt.Data.(*batchData).accs[n.ID] = acc
	return acc
}

// lend passes a tuple an Each node built in reused storage to the nodes
// that borrow it (reusedTuple.to): what emitFrom and process do, without
// their type switch on the operation, which is known, and without a data
// stream, which reused storage never feeds. When the tuple's last value
// was emitted by EmitString, str is that string and emitted is true: an
// aggregation grouped by it alone is passed it (aggregateString).
func (s *Processor) lend(to []borrower, bt *runtime.Batch, values []any, str string, emitted bool) error {
	for _, b := range to {
		if s.abandoned(b.n, bt) {
			continue
		}
		var err error
		switch {
		case emitted && b.byEmitted:
			err = s.aggregateString(b.n, bt, values, str)
		case b.aggregates:
			err = s.aggregate(b.n, bt, values)
		default:
			err = s.accumulate(b.n, bt, values)
		}
		if err := s.handle(b.n, bt, values, err); err != nil {
			return err
		}
	}
	return nil
}
