package trident

import (
	"fmt"
	"slices"

	"github.com/squallstream/squall/trident/internal/runtime"
)

// emitFrom passes a tuple that node n produced to n's children in this
// stage and, if n feeds other stages, emits it on n's data stream (the
// runtime counts it for every task it goes to).
func (s *stageTask) emitFrom(n *node, bt *runtime.Batch, values []any) error {
	o := &s.fanouts[n.id]
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
func (s *stageTask) process(n *node, bt *runtime.Batch, values []any) error {
	if err := s.apply(n, bt, values); err != nil {
		return s.rejected(err, bt.Attempt, n.parent.sch.fields, values)
	}
	return nil
}

func (s *stageTask) apply(n *node, bt *runtime.Batch, values []any) error {
	switch op := n.op.(type) {
	case *eachOp:
		c := &eachCollector{s: s, n: n, bt: bt, base: values, width: len(n.sch.fields)}
		if err := op.fn.Execute(s.ctx, project(values, op.inIdx, op.inSch), c); err != nil {
			return err
		}
		return c.err
	case *filterOp:
		keep, err := op.f.Keep(s.ctx, Tuple{values: values, sch: n.parent.sch})
		if err != nil || !keep {
			return err
		}
		return s.emitFrom(n, bt, values)
	case *mapOp:
		out, err := op.fn.Map(s.ctx, Tuple{values: values, sch: n.parent.sch})
		if err != nil {
			return err
		}
		if len(out) != len(n.sch.fields) {
			return fmt.Errorf("trident: Map returned %d values for fields %v", len(out), n.sch.fields)
		}
		return s.emitFrom(n, bt, out)
	case *flatMapOp:
		c := &eachCollector{s: s, n: n, bt: bt, width: len(n.sch.fields)}
		if err := op.fn.FlatMap(s.ctx, Tuple{values: values, sch: n.parent.sch}, c); err != nil {
			return err
		}
		return c.err
	case *peekOp:
		op.fn(Tuple{values: values, sch: n.parent.sch})
		return s.emitFrom(n, bt, values)
	case *projectOp:
		return s.emitFrom(n, bt, project(values, op.idx, n.sch).values)
	case *aggregateOp:
		a := s.aggregation(n, bt)
		if err := a.add(values); err != nil {
			return err
		}
		return a.takeEmitErr()
	case *queryOp:
		queries := bt.Data.(*batchData).queries
		q := queries[n]
		if q == nil {
			q = op.q.newBatch()
			queries[n] = q
		}
		q.add(values)
		return nil
	case *persistOp:
		accs := bt.Data.(*batchData).accs
		acc := accs[n]
		if acc == nil {
			acc = s.persist[n].newBatch()
			accs[n] = acc
		}
		return acc.add(values, op.inSch)
	default:
		return s.emitFrom(n, bt, values)
	}
}

// eachCollector appends a function's emitted values to its input tuple
// (base), and checks their number.
type eachCollector struct {
	s     *stageTask
	n     *node
	bt    *runtime.Batch
	base  []any
	width int    // the number of values the node's output has
	err   error  // the first error of an emit
	errp  *error // if set, where err is also stored
}

func (c *eachCollector) Emit(values ...any) {
	if c.err != nil {
		return
	}
	out := append(slices.Clip(c.base), values...)
	if len(out) != c.width {
		c.err = fmt.Errorf("trident: emitted %d values for fields %v", len(values), c.n.sch.fields[len(c.base):])
	} else {
		c.err = c.s.emitFrom(c.n, c.bt, out)
	}
	if c.err != nil && c.errp != nil && *c.errp == nil {
		*c.errp = c.err
	}
}

func (c *eachCollector) ReportError(err error) { c.s.task.ReportError(err) }
