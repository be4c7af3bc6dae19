package trident

import (
	"slices"

	"github.com/squallstream/squall/topology"
)

// emitFrom passes a tuple that node n produced to n's children in this
// group and, if n feeds other groups, emits it on n's data stream, counting
// it for every task it goes to.
func (b *groupBolt) emitFrom(n *node, bt *batch, values []any) error {
	for _, c := range n.children {
		if c.group != n.group {
			continue
		}
		if err := b.process(c, bt, values); err != nil {
			return err
		}
	}
	if crossesGroups(n) {
		out := make(topology.Values, 0, len(values)+1)
		out = append(append(out, bt.attempt), values...)
		for _, task := range b.out.EmitStream(dataStream(n), out) {
			bt.sent[task]++
		}
	}
	return nil
}

// process runs node n on a tuple of its parent.
func (b *groupBolt) process(n *node, bt *batch, values []any) error {
	switch n.kind {
	case kindEach:
		c := &eachCollector{b: b, n: n, bt: bt, base: values}
		if err := n.fn.Execute(b.ctx, project(values, n.inIdx, n.inSch), c); err != nil {
			return err
		}
		return c.err
	case kindFilter:
		keep, err := n.filter.Keep(b.ctx, Tuple{values: values, sch: n.parent.sch})
		if err != nil || !keep {
			return err
		}
		return b.emitFrom(n, bt, values)
	case kindProject:
		return b.emitFrom(n, bt, project(values, n.projIdx, n.sch).values)
	case kindPersist:
		acc := bt.accs[n]
		if acc == nil {
			acc = b.persist[n].newBatch()
			bt.accs[n] = acc
		}
		return acc.add(values, n.inSch)
	default:
		return b.emitFrom(n, bt, values)
	}
}

// eachCollector appends a function's emitted values to its input tuple.
type eachCollector struct {
	b    *groupBolt
	n    *node
	bt   *batch
	base []any
	err  error
}

func (c *eachCollector) Emit(values ...any) {
	if c.err != nil {
		return
	}
	out := append(slices.Clip(c.base), values...)
	c.err = c.b.emitFrom(c.n, c.bt, out)
}

func (c *eachCollector) ReportError(err error) { c.b.out.ReportError(err) }
