package exec

import (
	"fmt"

	"github.com/squallstream/squall/trident/internal/plan"
	"github.com/squallstream/squall/trident/internal/runtime"
)

// collector appends a function's emitted values to its input tuple
// (base), checks their number and passes the tuple on from its node.
type collector struct {
	s     *Processor
	n     *plan.Node
	bt    *runtime.Batch
	base  []any
	reuse *reusedTuple // where output tuples are built, if not in the arena
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
	out := c.take()
	copy(out[copy(out, c.base):], values)
	c.emit(out)
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
func (c *collector) take() []any {
	if c.reuse != nil {
		return c.reuse.values
	}
	return c.s.values.Take(c.width)
}

func (c *collector) emit(out []any) {
	if err := c.s.emitFrom(c.n, c.bt, out); err != nil {
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
func (s *Processor) collector(n *plan.Node, bt *runtime.Batch, values []any) *collector {
	c := &s.collectors[n.ID]
	*c = collector{s: s, n: n, bt: bt, base: values, reuse: s.fanouts[n.ID].reuse, width: len(n.Fields)}
	return c
}
