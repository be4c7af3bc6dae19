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
