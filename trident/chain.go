package trident

import (
	"fmt"
	"slices"

	"github.com/squallstream/squall/txn"
)

// Chain is a chained aggregation (Storm's chainedAgg): several aggregators
// run over the same batch (or group) and their results are joined into one
// tuple. Start one with ChainedAgg or ChainedGroups, add aggregators with
// ChainAggregate, and finish it with End.
type Chain struct {
	s     *Stream
	group Fields
	parts []chainPart
}

type chainPart struct {
	agg     erasedAggregator
	input   []int
	inSch   *schema
	outputs []string
}

// ChainedAgg starts a chained aggregation over all of each batch's tuples
// (in one task, like Aggregate).
func ChainedAgg(s *Stream) *Chain { return &Chain{s: s.Global()} }

// ChainedGroups starts a chained aggregation per group.
func ChainedGroups(g *GroupedStream) *Chain {
	return &Chain{s: g.s, group: slices.Clone(g.fields)}
}

// ChainAggregate adds agg, over the input fields, emitting values named
// outputs.
func ChainAggregate[S any](c *Chain, input Fields, agg Aggregator[S], outputs ...string) *Chain {
	c.s.checkFields("ChainAggregate", input)
	c.s.checkOutputs("ChainAggregate", outputs)
	if agg == nil {
		c.s.t.errorf("ChainAggregate: nil aggregator")
	}
	c.parts = append(c.parts, chainPart{agg: erased[S]{agg}, input: c.s.n.sch.indexes(input),
		inSch: newSchema(slices.Clone(input)), outputs: outputs})
	return c
}

// End returns the stream of joined results: the group fields (for
// ChainedGroups) followed by every aggregator's outputs, in order. When an
// aggregator emits several tuples, the results are the cross product.
func (c *Chain) End() *Stream {
	if len(c.parts) == 0 {
		c.s.t.errorf("ChainedAgg: no aggregators")
	}
	var outputs []string
	for _, p := range c.parts {
		outputs = append(outputs, p.outputs...)
	}
	all := c.s.n.sch.fields
	return aggregateNode[*chainState](c.s, "ChainedAgg", c.group, all, chained{parts: c.parts}, outputs)
}

// erasedAggregator is an Aggregator with its state type erased.
type erasedAggregator interface {
	init(a txn.Attempt, out Collector) (any, error)
	aggregate(acc any, t Tuple, out Collector) (any, error)
	complete(acc any, out Collector) error
}

type erased[S any] struct{ a Aggregator[S] }

func (e erased[S]) init(a txn.Attempt, out Collector) (any, error) { return e.a.Init(a, out) }
func (e erased[S]) aggregate(acc any, t Tuple, out Collector) (any, error) {
	return e.a.Aggregate(acc.(S), t, out)
}
func (e erased[S]) complete(acc any, out Collector) error { return e.a.Complete(acc.(S), out) }

// chained runs the parts of a chain as one Aggregator.
type chained struct{ parts []chainPart }

type chainState struct {
	states  []any
	results []*partResults
}

// partResults collects what one part emits.
type partResults struct {
	width  int
	tuples [][]any
	err    error
}

func (r *partResults) Emit(values ...any) {
	if len(values) != r.width && r.err == nil {
		r.err = fmt.Errorf("trident: chained aggregator emitted %d values for %d outputs", len(values), r.width)
		return
	}
	r.tuples = append(r.tuples, slices.Clone(values))
}

func (r *partResults) ReportError(error) {}

func (c chained) Init(a txn.Attempt, _ Collector) (*chainState, error) {
	st := &chainState{}
	for _, p := range c.parts {
		res := &partResults{width: len(p.outputs)}
		s, err := p.agg.init(a, res)
		if err != nil {
			return nil, err
		}
		st.states = append(st.states, s)
		st.results = append(st.results, res)
	}
	return st, nil
}

func (c chained) Aggregate(st *chainState, t Tuple, _ Collector) (*chainState, error) {
	for i, p := range c.parts {
		s, err := p.agg.aggregate(st.states[i], project(t.values, p.input, p.inSch), st.results[i])
		if err != nil {
			return st, err
		}
		st.states[i] = s
	}
	return st, nil
}

func (c chained) Complete(st *chainState, out Collector) error {
	for i, p := range c.parts {
		if err := p.agg.complete(st.states[i], st.results[i]); err != nil {
			return err
		}
		if err := st.results[i].err; err != nil {
			return err
		}
	}
	rows := [][]any{nil}
	for _, r := range st.results {
		var next [][]any
		for _, row := range rows {
			for _, tu := range r.tuples {
				next = append(next, append(slices.Clip(row), tu...))
			}
		}
		rows = next
	}
	for _, row := range rows {
		out.Emit(row...)
	}
	return nil
}
