// Package exec runs the operations of one stage of a Trident topology in
// one task: the runtime.Processor that the stage bolts of
// trident/internal/runtime drive.
//
// Package trident declares a topology and turns each declared operation
// into one of this package's Op values (Each, Filter, Aggregate,
// Persist...), which it hands to the planner as the plan node's payload.
// The ops reach the user's code through small type-erased interfaces
// (Function, Aggregator, Persister, Querier) that package trident
// implements over the user's typed operations, so this package never
// sees a user's type: it passes tuples as value slices, finds groups,
// joins sides, collects emitted values, routes a node's output to its
// children and to other stages, sends rejected tuples to the dead
// letters, quarantines corrupt stored values, runs each DRPC request's
// work under its context and counts what persistent states commit.
//
// Imports go one way: trident -> exec -> runtime, plan.
package exec
