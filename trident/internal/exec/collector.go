package exec

import (
	"fmt"

	"github.com/squallstream/squall/trident/internal/plan"
	"github.com/squallstream/squall/trident/internal/runtime"
	"github.com/squallstream/squall/trident/spout"
)

// collector appends a function's emitted values to its input tuple
// (base), checks their number and passes the tuple on from its node.
type collector struct {
	s     *Processor
	n     *plan.Node
	bt    *runtime.Batch
	base  []any
	reuse *reusedTuple // where output tuples are built, if not in the arena
	adder *aggregation // reuse.sole's batch, if it takes strings, for this call
	width int          // the number of values the node's output has
	err   error        // the first error of an emit
	errp  *error       // if set, where err is also stored
}

func (c *collector) Emit(values ...any) {
	if c.err != nil {
		return
	}
	if len(c.base)+len(values) != c.width {
		c.fail(fmt.Errorf("trident: emitted %d values for fields %v", len(values), c.n.Fields[len(c.base):]))
		return
	}
	if r := c.reuse; r != nil {
		copy(r.values[len(c.base):], values) // after the base, copied once per call
		r.boxed = false
		c.lend(r, "", false)
		return
	}
	out := c.s.values.Take(c.width)
	copy(out[copy(out, c.base):], values)
	c.emit(out)
}

// EmitString emits v through out if out is a collector of the processor
// and reports whether it was. trident.EmitString asks here first: the
// assertion to the concrete type is one comparison, where the assertion
// to an interface it would otherwise make looks the pair of types up in
// a cache, for every word of a word count.
func EmitString(out spout.Collector, v string) bool {
	c, ok := out.(*collector)
	if ok {
		c.EmitString(v)
	}
	return ok
}

// EmitString emits one string value without boxing it in an allocation
// of its own (see trident.EmitString).
func (c *collector) EmitString(v string) {
	if c.err != nil {
		return
	}
	if len(c.base)+1 != c.width {
		c.fail(fmt.Errorf("trident: emitted 1 value for fields %v", c.n.Fields[len(c.base):]))
		return
	}
	if r := c.reuse; r != nil {
		r.setString(v) // the last value (the width was checked); the base was copied once per call
		if c.adder != nil {
			c.addString(r, v)
			return
		}
		c.lend(r, v, true)
		return
	}
	out := c.s.values.Take(c.width)
	copy(out, c.base)
	out[len(c.base)] = c.s.strings.Box(v)
	c.emit(out)
}

// emit passes on a tuple built in the arena.
func (c *collector) emit(out []any) {
	if err := c.s.emitFrom(c.n, c.bt, out); err != nil {
		c.fail(err)
	}
}

// addString adds the tuple built in r, whose last value is the emitted
// string v, to the batch of the one aggregation grouped by it
// (reusedTuple.sole): what lend does for that consumer, without its loop,
// its switch and the batch's lookup. It repeats aggregateString's two
// calls rather than sharing a helper: a helper does not inline, and the
// extra call per word cost about 3 % of the word count at p1.
func (c *collector) addString(r *reusedTuple, v string) {
	err := c.adder.strings.AddString(r.values, v)
	if err == nil {
		err = c.adder.takeEmitErr()
	}
	if err != nil {
		if err := c.s.handle(r.sole, c.bt, r.values, err); err != nil {
			c.fail(err)
		}
	}
}

// lend passes on the tuple built in reused storage r; str and emitted
// are as for Processor.lend.
func (c *collector) lend(r *reusedTuple, str string, emitted bool) {
	if err := c.s.lend(r.to, c.bt, r.values, str, emitted); err != nil {
		c.fail(err)
	}
}

func (c *collector) fail(err error) {
	c.err = err
	if c.errp != nil && *c.errp == nil {
		*c.errp = err
	}
}

func (c *collector) ReportError(err error) { c.s.task.ReportError(err) }

// collector returns node n's collector for one call of its function,
// reset for the tuple values. One collector per node is reused: a node
// never runs inside its own call (the nodes of a stage form a tree), and a
// collector must not be used after the call it was passed to returns.
//
// When n builds its output in reused storage, values are copied there
// once, here, and each emit writes only what follows them: the consumers
// of reused storage borrow, so nothing writes to it during the call but
// the collector (see reusedTuple).
//
// What does not change from call to call (the processor, the node, its
// reused storage, the width) was set in NewProcessor.
func (s *Processor) collector(n *plan.Node, bt *runtime.Batch, values []any) *collector {
	c := &s.collectors[n.ID]
	c.bt, c.base, c.err, c.adder = bt, values, nil, nil
	if r := c.reuse; r != nil && len(values) <= c.width {
		copy(r.values, values)
		if r.sole != nil {
			if a := s.aggregation(r.sole, bt); a.strings != nil {
				c.adder = a
			}
		}
	}
	return c
}
