// Package coordstore keeps what a stream's batch coordination must not
// lose: the coordinator's record (the last committed txid and the attempt
// numbers in flight) and each spout partition's metadata per txid (for
// example the Kafka offsets of a batch). It is the counterpart of the
// ZooKeeper state of Storm's Trident (TransactionalState and
// RotatingTransactionalState).
//
// Store is the interface every implementation provides: Memory here, a
// durable bbolt store in boltstore, a Cassandra one in cassandrastore and
// an etcd one in etcdstore (for cluster mode). The conformance suite in coordstoretest checks any
// implementation, and faultstore wraps one to inject failures.
//
// # Ordering contract
//
// Every Store satisfies these rules, which the coordinator's shell and the
// spouts rely on:
//
//  1. Every method is safe for concurrent use.
//  2. A write that returned nil is visible to every call that starts after
//     it returned, from any goroutine; a durable store has also made it
//     durable (fsync or a replicated write) before returning, so it
//     survives a crash and is seen after reopening.
//  3. A write that returned an error may or may not have taken effect. Meta
//     writes are idempotent and can simply be retried; after a failed
//     SwapCoordinator the caller reloads the record to learn which.
//  4. SwapCoordinator is a compare-and-set on the record's Version: it
//     succeeds only if the stored version is the one given (0: no record),
//     and the new version is greater than every earlier version of that
//     stream. Two coordinators of one stream therefore cannot both write:
//     the one that loses gets ErrConflict and must stop.
//  5. Metadata entries of different keys are independent. PutMeta replaces
//     the entry of its txid; removing an absent entry is not an error;
//     CleanupMetaBefore(t) removes exactly the entries below t.
//  6. Values are copied in both directions: a store never keeps the
//     caller's slices or maps, and callers may modify what it returns.
//
// The users' side of the contract (in the coordinator's shell and the
// spouts): the coordinator record is swapped before any batch it covers is
// emitted and before a success is announced; a transactional spout puts a
// batch's partition metadata before emitting the batch, an opaque spout
// puts it while committing; metadata before a txid is cleaned up only after
// the record saying that txid committed was swapped.
//
// # Ownership
//
// One process at a time owns a topology (an owner). Acquire hands out a
// greater generation each time; every write (SwapCoordinator, PutMeta,
// RemoveMeta, CleanupMetaBefore) carries the writer's generation and fails
// with ErrFenced, storing nothing, unless it is the owner's newest. The
// check is atomic with Acquire, so a process superseded by a newer one can
// never commit a batch or change metadata again. Within one generation,
// SwapCoordinator's version still fences two coordinators of one process.
//
// # Errors
//
// Errors follow package failure: an I/O error (a timeout, an unreachable
// server, a failed fsync) is retryable; ErrFenced, ErrConflict, ErrCorrupt, ErrInvalid
// and ErrClosed are fatal. A canceled context returns the context's error.
package coordstore
