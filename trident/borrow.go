package trident

import "github.com/squallstream/squall/internal/arena"

// TupleBorrower is implemented by an operation that keeps nothing of a
// tuple it is passed once the call returns: not the Tuple, not its
// Values, not an interface value that Value or Lookup returned, neither
// in an error it returns nor in a value it emits. What it converted to a
// type of its own may be kept or emitted (the string that String
// returns, a number). The runtime then passes such an operation tuples
// built in storage it reuses from one tuple to the next, which spares the
// allocations of every tuple a Function emits to it.
//
// It is honoured on the aggregators of PartitionAggregate, Aggregate and
// AggregateGroups (an Aggregator's Aggregate; a CombinerAggregator's Init
// through Combining, a ReducerAggregator's Reduce through Reducing) and
// on the CombinerAggregator of PersistentAggregate, when every operation
// that reads a Function's output in its stage borrows. The combiners of
// package ops (Count, Sum, Min, Max and their kin) borrow.
type TupleBorrower interface {
	BorrowsTuples() bool
}

// borrowsTuples reports whether op implements TupleBorrower and borrows.
func borrowsTuples(op any) bool {
	b, ok := op.(TupleBorrower)
	return ok && b.BorrowsTuples()
}

// borrows reports whether node n keeps nothing of the tuples of its
// parent: they may then be built in reused storage.
func borrows(n *node) bool {
	switch op := n.op.(type) {
	case *aggregateOp:
		return op.agg.borrows()
	case *persistOp:
		return borrowsTuples(op.p)
	}
	return false
}

// reusedTuple is the storage an Each node builds its output tuples in
// when every consumer of them borrows (see TupleBorrower): one values
// slice, and one string header for what EmitString boxes, rewritten for
// every tuple.
type reusedTuple struct {
	values []any
	str    arena.Slot
}

// reusable returns the reused storage for node n's output, or nil when
// some consumer may keep its tuples or they leave the stage.
func reusable(n *node, f fanout) *reusedTuple {
	if _, ok := n.op.(*eachOp); !ok || f.stream != "" || len(f.local) == 0 {
		return nil
	}
	for _, c := range f.local {
		if !borrows(c) {
			return nil
		}
	}
	return &reusedTuple{values: make([]any, len(n.sch.fields))}
}

// detach returns values with every string boxed anew, so that it no
// longer points into reused storage: for what is kept of a borrowed
// tuple, such as a group's key values or a dead letter. It writes in
// place and returns values.
func detach(values []any) []any {
	for i, v := range values {
		if s, ok := v.(string); ok {
			values[i] = s // a new box, holding a copy of the header
		}
	}
	return values
}
