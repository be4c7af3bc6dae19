package trident

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

// TupleCounter is implemented by a CombinerAggregator[int64] that counts
// tuples, as ops.Count does: Init returns 1 for every tuple, never an
// error, and Combine adds. PersistentAggregate then counts each group's
// tuples of a batch itself, without calling Init and Combine for every
// tuple. CountsTuples must return true only for such an aggregator; it is
// ignored on aggregators of other value types.
type TupleCounter interface {
	CountsTuples() bool
}

// countsTuples reports whether agg counts tuples (TupleCounter) and its
// values are int64s.
func countsTuples[V any](agg CombinerAggregator[V]) bool {
	c, ok := agg.(TupleCounter)
	_, int64s := any(*new(V)).(int64)
	return ok && int64s && c.CountsTuples()
}
