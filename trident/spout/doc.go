// Package spout holds the spout flavours of a Trident-style stream as pure
// components: what a spout emits for a batch attempt, and what metadata is
// stored when. They know nothing of goroutines or of the tuple runtime;
// the runtime drives them through an Allocator (one per stream) and an
// Executor (one per spout task), over a coordstore.Store.
//
// # Flavours
//
//   - A non-transactional batch spout (Batcher, BatchExecutor) emits what
//     it has; nothing is stored and replays may differ.
//   - A transactional partitioned spout (Lister + Emitter,
//     TransactionalExecutor) fixes a partition's batch at its first
//     emission: its metadata is stored before its tuples leave the
//     executor, and every replay re-emits exactly the same tuples.
//   - An opaque partitioned spout (Lister + Emitter, OpaqueExecutor)
//     stores nothing while a batch is processed: a replay starts where the
//     previous batch ended and may differ. Unlike Storm, the batch is
//     frozen when it enters its commit phase: its metadata is stored
//     before any state is written, and every later replay of the txid is
//     exact. This keeps opaque state exactly-once even when a commit
//     fails after writing part of its keys; docs/spouts.md explains why.
//
// Emitters have typed metadata (for Kafka, an offset range); a Codec turns
// it into the bytes the store keeps, JSON by default.
//
// # Ordering contract
//
// The runtime calls the components in this order for every batch attempt
// a the batch coordinator emits:
//
//  1. b := Allocator.Begin(ctx, a), once. A transactional allocator
//     stores the partition set before returning; a replay gets the stored
//     set.
//  2. Executor.EmitBatch(ctx, b, collector) on every task, with the same
//     b. A transactional executor stores each partition's metadata before
//     that partition's tuples reach the collector. An error fails the
//     batch.
//  3. When the batch coordinator commits a: Allocator.BeginCommit(ctx,
//     a), then, once it returned nil, Executor.BeginCommit(ctx, a) on
//     every task, then, once all returned nil, the state of the txid is
//     written. If any of them fails, no state is written and the commit
//     fails (the batch is replayed). An opaque spout freezes the batch
//     here: the allocator stores the partition set, each executor its
//     partitions' metadata.
//  4. When the batch coordinator announces Success for the txid:
//     Allocator.Success and Executor.Success on every task. They delete
//     metadata before the txid; an error only delays that.
//
// Each task calls its executor from one goroutine, in txid order, and
// calls EmitBatch for every batch the allocator begins (a re-emitted
// txid discards the later batches, which are begun again). The runtime
// stamps each Batch with the last committed txid (Batch.Committed), from
// which an executor knows what committed, even when it starts while
// batches are in flight or an announcement was lost. Attempt numbers come
// from the batch coordinator: a txid
// emitted again has a higher number, and BeginCommit must name the attempt
// that was last emitted.
//
// # Partitions and tasks
//
// The allocator lists partitions (sorted, distinct); task i of n emits
// those at positions i, i+n, i+2n... (Assign). Partitions found by a later
// listing are emitted from their first record. When the set changes,
// partitions may move between tasks; a task that gains a partition while
// batches that gave it to another task are in flight cannot know where its
// next batch starts, so the partition has no batch until those batches
// committed (docs/spouts.md shows an example). A task writes and deletes only the entries
// of partitions it owns in the batch at hand (STORM-3337 was a task
// wiping other tasks' offsets).
//
// # Stored entries
//
// For each partition p, the store holds under Key{stream, p} one entry
// per txid: the metadata of p's batch in that txid, or an empty value (a
// marker) when p had no batch in it. The allocator keeps its partition
// sets under the reserved partition name "$partitions". A partition's
// position is its last non-marker entry; Success deletes a partition's
// entries before the txid only where the txid's entry is not a marker, so
// the position is never lost.
//
// # Errors
//
// Store and emitter errors keep their failure kind (package failure):
// retryable errors fail the batch and it is replayed; unwrapped errors are
// fatal. They are wrapped in a *PartitionError naming stream, partition
// and txid. A re-emission that the source can no longer produce
// (ErrUnavailable) is a reported failure. Undecodable metadata
// (ErrBadMetadata) and broken ordering (ErrStale, ErrInvalidBatch) are
// fatal.
//
// Package spout imports the coordination store (trident/coordstore),
// state, failure and txn; it must not import the runtime, the tuple-level topology
// or package trident.
package spout
