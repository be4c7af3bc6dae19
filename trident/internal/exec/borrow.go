package exec

import (
	"github.com/squallstream/squall/internal/arena"
	"github.com/squallstream/squall/trident/internal/plan"
)

// Borrows reports whether op keeps nothing of a tuple it is passed once
// the call returns (it implements BorrowsTuples() bool and returns
// true; see trident.TupleBorrower).
func Borrows(op any) bool {
	b, ok := op.(interface{ BorrowsTuples() bool })
	return ok && b.BorrowsTuples()
}

// borrows reports whether node n keeps nothing of the tuples of its
// parent: they may then be built in reused storage.
func borrows(n *plan.Node) bool {
	switch op := opOf(n).(type) {
	case *Aggregate:
		return op.Agg.BorrowsTuples()
	case *Persist:
		return Borrows(op.P)
	}
	return false
}

// reusedTuple is the storage an Each node builds its output tuples in
// when every consumer of them borrows: one values slice, and one string
// header for what EmitString boxes, rewritten for every tuple. The input
// tuple's values are copied into it once per call of the function
// (Processor.collector); each emit rewrites only what follows them.
type reusedTuple struct {
	values []any
	str    arena.Slot
	// boxed is set while the last of values is str's box, which reads
	// as the string boxed last: EmitString need then only rewrite the
	// slot, not store the interface value again (a pointer store, with
	// its write barrier while the GC marks). Emit clears it.
	boxed bool
	to    []borrower // the node's consumers, in its fanout's order
	// sole is set when the node's one consumer is an aggregation grouped
	// by the emitted string: EmitString passes the string to its batch
	// directly (collector.addString), which the collector looks up once
	// per call of the function instead of once per word. (An aggregation
	// of an abandoned DRPC request, which lend skips, may be added to:
	// Finish never completes it, and its rejections are dropped.)
	sole *plan.Node
}

// soleStringBorrower returns the node reusedTuple.sole is set to for a
// node whose consumers are to, or nil.
func soleStringBorrower(to []borrower) *plan.Node {
	if len(to) != 1 || !to[0].byEmitted {
		return nil
	}
	return to[0].n
}

// setString makes s the last of the tuple's values.
func (r *reusedTuple) setString(s string) {
	b := r.str.Box(s)
	if !r.boxed {
		r.values[len(r.values)-1] = b
		r.boxed = true
	}
}

// borrower is a consumer of reused storage: an aggregation or a
// persistent node.
type borrower struct {
	n          *plan.Node
	aggregates bool // an Aggregate; else a Persist
	// byEmitted is set for an Aggregate whose only group field is the
	// value EmitString writes: it is passed the string itself
	// (groupsByEmitted).
	byEmitted bool
}

// reusable returns the reused storage for node n's output, or nil when
// some consumer may keep its tuples or they leave the stage.
func reusable(n *plan.Node, f fanout) *reusedTuple {
	if _, ok := opOf(n).(*Each); !ok || f.stream != "" || len(f.local) == 0 {
		return nil
	}
	r := &reusedTuple{values: make([]any, len(n.Fields))}
	for _, c := range f.local {
		if !borrows(c) {
			return nil
		}
		_, aggregates := opOf(c).(*Aggregate)
		r.to = append(r.to, borrower{n: c, aggregates: aggregates, byEmitted: groupsByEmitted(n, c)})
	}
	return r
}

// Detach returns values with every string boxed anew, so that it no
// longer points into reused storage: for what is kept of a borrowed
// tuple, such as a group's key values or a dead letter. It writes in
// place and returns values.
func Detach(values []any) []any {
	for i, v := range values {
		if s, ok := v.(string); ok {
			values[i] = s // a new box, holding a copy of the header
		}
	}
	return values
}

// ReusesOutput reports whether the processors of plan p build node n's
// output tuples in reused storage.
func ReusesOutput(p *plan.Plan, n *plan.Node) bool {
	o := p.Fanout(n)
	return reusable(n, fanout{local: o.Local, stream: o.Stream}) != nil
}
