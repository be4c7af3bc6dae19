// Package runtime runs a planned Trident topology on the tuple-level
// runtime (package topology): it is the shell around the pure cores, the
// batch coordinator (trident/internal/coord) and the batch-completion
// machine (trident/internal/completion).
//
// Build turns a plan (trident/internal/plan) into a topology of
//
//   - the master coordinator spout ($master), the shell of the batch
//     coordinator: it persists the coordinator's state, announces batches
//     ($batch), runs each commit as a $freeze tree then a $commit tree,
//     and announces successes ($success);
//   - one stage bolt per stage: the shell of a completion machine, which
//     counts what it sends each downstream task and reports the counts
//     ($report), and runs a source's executor (trident/spout) for a
//     source stage.
//
// The runtime does not know the user's operations. A stage bolt runs
// them through a Processor, which the API layer (package trident)
// compiles from its operations for each stage task: Begin a batch, Source
// and Execute tuples, Finish it (aggregations complete, committers write
// state). The runtime owns everything around that: ownership fencing,
// retries with backoff and the health log, failure accounting, halting,
// batch latencies, and the Status shared with the API's Running.
//
// Package runtime may import the planner, the pure cores, the spout
// flavours, the coordination store, state and the tuple-level topology;
// it must not import package trident (the API layer imports it).
package runtime
