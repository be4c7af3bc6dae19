// Package trident runs micro-batch stream processing with exactly-once
// state on squall's tuple-level core, in the style of Apache Storm's
// Trident.
//
// A Topology declares streams from sources (batch, transactional or opaque
// partitioned spouts), transforms them (Each, Filter, Project), repartitions
// them (Shuffle, PartitionBy, Global, Broadcast) and keeps aggregates in
// state (GroupBy then PersistentAggregate). Submit turns the declaration into
// a topology of spouts and bolts and runs it:
//
//   - a master coordinator spout owns the batch coordinator
//     (trident/internal/coord) and the coordination store: it announces
//     batches (txids from 1), commits them strictly in txid order and tells
//     everyone when a batch succeeded;
//   - one spout bolt per source emits each batch's tuples through the
//     source's executor (trident/spout);
//   - processing bolts run the operations between repartitions.
//
// Data tuples are emitted unanchored; batch completion is tracked as Storm
// does: every task tells every downstream task how many tuples it sent it
// for the batch in a coordination tuple, and those coordination tuples are
// tuple trees rooted at the master's announcement, tracked by the acker. A
// batch whose counts do not match fails; it is never committed.
//
// Each batch goes through two phases. In the processing phase (pipelined,
// up to Config.MaxBatchesInFlight batches) tuples flow and aggregations are
// computed; bolts that write state (committers) only buffer. In the commit
// phase (one batch at a time, in txid order) the master first has every
// spout task freeze the batch's metadata, so that any replay of the txid is
// identical, and then tells committers to write: they apply the batch to
// state with its txid, which is what makes opaque and transactional state
// exactly-once.
//
// Errors follow package failure: a retryable or reported failure from an
// operation, a state or a spout fails the batch, which the coordinator
// replays with a higher attempt number; anything else crashes the worker,
// which restarts and resumes from the last committed txid.
package trident
