// Package trident runs micro-batch stream processing with exactly-once
// state on squall's tuple-level core, in the style of Apache Storm's
// Trident.
//
// A Topology declares streams from sources (batch, transactional or opaque
// partitioned spouts), transforms them (Each, Filter, Project), repartitions
// them (Shuffle, PartitionBy, Global, Broadcast) and keeps aggregates in
// state (GroupBy then PersistentAggregate). Submit plans the declaration
// into stages (everything between a source or a repartition and the next
// repartitions), turns them into a topology of spouts and bolts and runs
// it:
//
//   - the master coordinator spout owns the batch coordinator and the
//     coordination store: it announces batches (txids from 1), commits
//     them strictly in txid order and tells everyone when a batch
//     succeeded;
//   - one bolt per source stage emits each batch's tuples through the
//     source's executor (trident/spout);
//   - one bolt per other stage runs the operations between repartitions.
//
// Data tuples are emitted unanchored; batch completion is tracked as Storm
// does: every task tells every downstream task how many tuples it sent it
// for the batch in a count report, and those reports are tuple trees
// rooted at the master's announcement, tracked by the acker. A batch
// whose counts do not match fails; it is never committed.
//
// Each batch goes through two phases. In the processing phase (pipelined,
// up to Config.MaxBatchesInFlight batches) tuples flow and aggregations are
// computed; stages that write state (committers) only buffer. In the
// commit phase (one batch at a time, in txid order) the master first has
// every spout task freeze the batch's metadata, so that any replay of the
// txid is identical, and then tells committers to write: they apply the
// batch to state with its txid, which is what makes opaque and
// transactional state exactly-once.
//
// Errors follow package failure: a retryable or reported failure from an
// operation, a state or a spout fails the batch, which the coordinator
// replays with a higher attempt number; anything else crashes the worker,
// which restarts and resumes from the last committed txid.
//
// # Layers
//
// Package trident is the API layer: the declarations (Topology, Stream,
// the operation interfaces, sources, state factories), Config, Submit and
// Running. Under it, in trident/internal:
//
//   - plan, the planner: a pure function from a description of the
//     declared graph to stages; it imports nothing of squall;
//   - exec, the stage processor: it runs a stage's operations in one
//     task on value slices, reaching the user's operations through
//     type-erased interfaces this package implements over the user's
//     types (bind.go and the generic aggregators, persisters and
//     queriers); it is the runtime.Processor of each stage task;
//   - runtime, the shells: the master coordinator spout, the stage bolts,
//     fencing, retries and the status Running reads;
//   - coord and completion, the pure batch coordinator and
//     batch-completion machine the runtime drives.
//
// Imports go one way: trident -> exec -> runtime -> plan, coord,
// completion (trident also imports runtime and plan, to generate and
// describe its graph). The layers below
// never import package trident; docs/trident.md describes them and the
// vocabulary.
package trident
