package trident

import (
	"fmt"
	"slices"

	"github.com/squallstream/squall/topology"
)

// emitFrom passes a tuple that node n produced to n's children in this
// group and, if n feeds other groups, emits it on n's data stream, counting
// it for every task it goes to.
func (b *groupBolt) emitFrom(n *node, bt *batch, values []any) error {
	o := &b.plan.fanouts[n.id]
	for _, c := range o.local {
		if err := b.process(c, bt, values); err != nil {
			return err
		}
	}
	if o.stream != "" {
		out := make(topology.Values, 0, len(values)+1)
		out = append(append(out, bt.attempt), values...)
		for _, task := range b.out.EmitStream(o.stream, out) {
			bt.sent[task]++
		}
	}
	return nil
}

// enter runs a tuple that arrived on input in through the group: a
// repartition or merge passes it on, any other node processes it.
func (b *groupBolt) enter(in input, bt *batch, values []any) error {
	switch op := in.entry.op.(type) {
	case *partitionOp, *mergeOp:
		return b.emitFrom(in.entry, bt, values)
	case *joinOp:
		j := bt.joins[in.entry]
		if j == nil {
			j = op.plan.newBatch()
			bt.joins[in.entry] = j
		}
		return j.add(in.side, values)
	}
	return b.process(in.entry, bt, values)
}

// process runs node n on a tuple of its parent. A tuple the node's
// operation rejects goes to the dead letters.
func (b *groupBolt) process(n *node, bt *batch, values []any) error {
	if err := b.apply(n, bt, values); err != nil {
		return b.rejected(err, bt.attempt, n.parent.sch.fields, values)
	}
	return nil
}

func (b *groupBolt) apply(n *node, bt *batch, values []any) error {
	switch op := n.op.(type) {
	case *eachOp:
		c := &eachCollector{b: b, n: n, bt: bt, base: values, width: len(n.sch.fields)}
		if err := op.fn.Execute(b.ctx, project(values, op.inIdx, op.inSch), c); err != nil {
			return err
		}
		return c.err
	case *filterOp:
		keep, err := op.f.Keep(b.ctx, Tuple{values: values, sch: n.parent.sch})
		if err != nil || !keep {
			return err
		}
		return b.emitFrom(n, bt, values)
	case *mapOp:
		out, err := op.fn.Map(b.ctx, Tuple{values: values, sch: n.parent.sch})
		if err != nil {
			return err
		}
		if len(out) != len(n.sch.fields) {
			return fmt.Errorf("trident: Map returned %d values for fields %v", len(out), n.sch.fields)
		}
		return b.emitFrom(n, bt, out)
	case *flatMapOp:
		c := &eachCollector{b: b, n: n, bt: bt, width: len(n.sch.fields)}
		if err := op.fn.FlatMap(b.ctx, Tuple{values: values, sch: n.parent.sch}, c); err != nil {
			return err
		}
		return c.err
	case *peekOp:
		op.fn(Tuple{values: values, sch: n.parent.sch})
		return b.emitFrom(n, bt, values)
	case *projectOp:
		return b.emitFrom(n, bt, project(values, op.idx, n.sch).values)
	case *aggregateOp:
		a := b.aggregation(n, bt)
		if err := a.add(values); err != nil {
			return err
		}
		return a.takeEmitErr()
	case *queryOp:
		q := bt.queries[n]
		if q == nil {
			q = op.q.newBatch()
			bt.queries[n] = q
		}
		q.add(values)
		return nil
	case *persistOp:
		acc := bt.accs[n]
		if acc == nil {
			acc = b.persist[n].newBatch()
			bt.accs[n] = acc
		}
		return acc.add(values, op.inSch)
	default:
		return b.emitFrom(n, bt, values)
	}
}

// eachCollector appends a function's emitted values to its input tuple
// (base), and checks their number.
type eachCollector struct {
	b     *groupBolt
	n     *node
	bt    *batch
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
		c.err = c.b.emitFrom(c.n, c.bt, out)
	}
	if c.err != nil && c.errp != nil && *c.errp == nil {
		*c.errp = c.err
	}
}

func (c *eachCollector) ReportError(err error) { c.b.out.ReportError(err) }
