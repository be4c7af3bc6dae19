package trident

import (
	"fmt"

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
//
// For a DRPC request that ended without an answer, the tuple goes no
// further and an error of its work is dropped.
func (s *stageTask) process(n *node, bt *runtime.Batch, values []any) error {
	if s.abandoned(n, bt) {
		return nil
	}
	if err := s.apply(n, bt, values); err != nil {
		if s.abandoned(n, bt) {
			return nil
		}
		return s.rejectedAt(n, bt, err, values)
	}
	return nil
}

func (s *stageTask) apply(n *node, bt *runtime.Batch, values []any) error {
	switch op := n.op.(type) {
	case *eachOp:
		c := s.eachCollector(n, bt, values)
		if err := op.fn.Execute(s.ctxOf(n, bt), project(values, op.inIdx, op.inSch), c); err != nil {
			return err
		}
		return c.err
	case *filterOp:
		keep, err := op.f.Keep(s.ctxOf(n, bt), Tuple{values: values, sch: n.parent.sch})
		if err != nil || !keep {
			return err
		}
		return s.emitFrom(n, bt, values)
	case *mapOp:
		out, err := op.fn.Map(s.ctxOf(n, bt), Tuple{values: values, sch: n.parent.sch})
		if err != nil {
			return err
		}
		if len(out) != len(n.sch.fields) {
			return fmt.Errorf("trident: Map returned %d values for fields %v", len(out), n.sch.fields)
		}
		return s.emitFrom(n, bt, out)
	case *flatMapOp:
		c := s.eachCollector(n, bt, nil)
		if err := op.fn.FlatMap(s.ctxOf(n, bt), Tuple{values: values, sch: n.parent.sch}, c); err != nil {
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
		acc := accs[n.id]
		if acc == nil {
			acc = s.persist[n].newBatch()
			accs[n.id] = acc
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
	reuse *reusedTuple // where output tuples are built, if not in the arena
	width int          // the number of values the node's output has
	err   error        // the first error of an emit
	errp  *error       // if set, where err is also stored
}

func (c *eachCollector) Emit(values ...any) {
	if c.err != nil {
		return
	}
	if len(c.base)+len(values) != c.width {
		c.fail(fmt.Errorf("trident: emitted %d values for fields %v", len(values), c.n.sch.fields[len(c.base):]))
		return
	}
	out := c.take()
	copy(out[copy(out, c.base):], values)
	c.emit(out)
}

// EmitString emits one string value without boxing it in an allocation
// of its own (see EmitString).
func (c *eachCollector) EmitString(v string) {
	if c.err != nil {
		return
	}
	if len(c.base)+1 != c.width {
		c.fail(fmt.Errorf("trident: emitted 1 value for fields %v", c.n.sch.fields[len(c.base):]))
		return
	}
	out := c.take()
	copy(out, c.base)
	if c.reuse != nil {
		out[len(c.base)] = c.reuse.str.Box(v)
	} else {
		out[len(c.base)] = c.s.strings.Box(v)
	}
	c.emit(out)
}

// take returns the storage for an output tuple: the node's reused
// storage if its consumers borrow, else fresh values from the arena.
func (c *eachCollector) take() []any {
	if c.reuse != nil {
		return c.reuse.values
	}
	return c.s.values.Take(c.width)
}

func (c *eachCollector) emit(out []any) {
	if err := c.s.emitFrom(c.n, c.bt, out); err != nil {
		c.fail(err)
	}
}

func (c *eachCollector) fail(err error) {
	c.err = err
	if c.errp != nil && *c.errp == nil {
		*c.errp = err
	}
}

func (c *eachCollector) ReportError(err error) { c.s.task.ReportError(err) }

// eachCollector returns node n's collector for one call of its function,
// reset for the tuple values. One collector per node is reused: a node
// never runs inside its own call (the nodes of a stage form a tree), and a
// collector must not be used after the call it was passed to returns.
func (s *stageTask) eachCollector(n *node, bt *runtime.Batch, values []any) *eachCollector {
	c := &s.collectors[n.id]
	*c = eachCollector{s: s, n: n, bt: bt, base: values, reuse: s.fanouts[n.id].reuse, width: len(n.sch.fields)}
	return c
}
