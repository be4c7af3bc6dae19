package exec

import (
	"slices"

	"github.com/squallstream/squall/trident/internal/plan"
	"github.com/squallstream/squall/trident/internal/runtime"
)

// StringGrouped is an Aggregator whose batches can take a tuple's one
// group field, a string, as the string itself (StringAdder), so that an
// Each emitting that string with trident.EmitString can hand it to the
// group lookup directly instead of the lookup reading it back from the
// tuple's interface value.
type StringGrouped interface {
	// GroupField returns the position in the input tuple of the
	// aggregation's only group field; ok is false if it has no group
	// field or more than one.
	GroupField() (pos int, ok bool)
}

// StringAdder is an AggregateBatch of a StringGrouped aggregation.
type StringAdder interface {
	// AddString does what Add(values) does, given s, the string at the
	// group field's position of values: values must hold s there.
	AddString(values []any, s string) error
}

// groupsByEmitted reports whether aggregation node c, a consumer of Each
// node n, groups by the one value n's EmitString writes (the last of n's
// fields) and nothing else: only then may the emitted string stand for
// the tuple's group.
func groupsByEmitted(n, c *plan.Node) bool {
	a, ok := opOf(c).(*Aggregate)
	if !ok {
		return false
	}
	g, ok := a.Agg.(StringGrouped)
	if !ok {
		return false
	}
	pos, ok := g.GroupField()
	return ok && pos == len(n.Fields)-1
}

// aggregateString adds a tuple whose group is the string s (at the
// group field's position of values) to aggregation node n's batch.
func (s *Processor) aggregateString(n *plan.Node, bt *runtime.Batch, values []any, str string) error {
	a := s.aggregation(n, bt)
	if a.strings == nil {
		return s.aggregate(n, bt, values)
	}
	if err := a.strings.AddString(values, str); err != nil {
		return err
	}
	return a.takeEmitErr()
}

// PassesEmitted reports whether the processors of plan p hand what Each
// node n emits with EmitString, as a string, to some aggregation grouped
// by it (groupsByEmitted).
func PassesEmitted(p *plan.Plan, n *plan.Node) bool {
	o := p.Fanout(n)
	r := reusable(n, fanout{local: o.Local, stream: o.Stream})
	return r != nil && slices.ContainsFunc(r.to, func(b borrower) bool { return b.byEmitted })
}
