// Package cassandrastore is a coordstore.Store in Apache Cassandra, over a
// session of package state/cassandra, so that a deployment keeps both its
// state and its batch coordination in Cassandra.
//
// One table in the session's keyspace (created by Open if absent):
//
//	squall_coordination (namespace blob, owner blob,
//	                     gen bigint static, version bigint static, record blob static,
//	                     stream blob, partition blob, txid bigint, value blob,
//	                     PRIMARY KEY ((namespace, owner), stream, partition, txid))
//
// Everything of one owner (a topology) is one partition: its newest
// generation, its coordinator record and version in static columns, and
// its metadata entries as rows. A lightweight transaction's condition
// can only read its own partition; this layout lets every write check
// the owner's generation in the same transaction that makes it.
//
// Fencing. Every write is a lightweight transaction at the session's
// serial consistency, conditioned on the static gen being the writer's
// generation; Acquire is a compare-and-set of gen itself. Paxos orders
// all of them on the partition, so once Acquire has stored generation
// g+1, no write of generation g can apply, whenever it arrives; a
// rejected write stores nothing and returns an error matching
// coordstore.ErrFenced. The statements:
//
//   - Acquire: INSERT (gen 1, version 0) IF NOT EXISTS for the first
//     owner, UPDATE SET gen = g+1 IF gen = g after it. A lost race starts
//     over from the generation the transaction returned; a timeout (its
//     outcome unknown) from a serial read. A transaction that applied
//     but whose answer was lost only leaves a generation unused.
//   - SwapCoordinator: UPDATE version, record IF gen = ? AND version = ?.
//     When not applied, the returned row tells a superseded generation
//     (ErrFenced) from a version conflict (ErrConflict). A timeout is
//     settled by a serial read.
//   - PutMeta: UPDATE value of the entry's row IF gen = ? (a condition on
//     a static column in a row update). RemoveMeta: DELETE of the row IF
//     gen = ?. Both are idempotent: one whose outcome is unknown is tried
//     again a few times.
//   - CleanupMetaBefore: a range deletion takes no condition, but a
//     conditional batch on one partition applies all its statements or
//     none, so it is a batch of UPDATE SET gen = g IF gen = g (rewriting
//     the generation unchanged, only to carry the condition) and DELETE
//     ... AND txid < ?. One statement, however many entries it removes.
//
// Because every write of this table is a lightweight transaction, their
// timestamps are Paxos ballots, which grow on each partition: a remove
// and a put of one entry keep their order. (Mixing in ordinary writes,
// whose timestamps come from clocks, could misorder them.)
//
// Reads: Generation and LoadCoordinator read at the serial level, which
// completes any transaction left in progress first; GetMeta and PrevMeta
// read at the session's consistency (PrevMeta with the clustering
// restricted by equality on stream and partition and by range on txid:
// one single-partition read).
//
// Format change: earlier versions kept records in squall_coordinator and
// entries in squall_meta, without generations. This store neither reads
// nor drops those tables; a deployment that upgrades starts its
// coordination afresh (its state tables keep their values and txids).
//
// Namespace separates independent users of one keyspace (the suite gives
// each test its own); owners are unique within it.
//
// Errors: timeouts, unavailable replicas and lost connections are
// retryable (package failure); a superseded generation is
// coordstore.ErrFenced, a version mismatch coordstore.ErrConflict, and
// data that cannot be decoded coordstore.ErrCorrupt, all fatal; the
// session's closing is not the store's: Close only stops this store.
package cassandrastore
