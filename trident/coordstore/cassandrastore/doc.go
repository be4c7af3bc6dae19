// Package cassandrastore is a coordstore.Store in Apache Cassandra, over a
// session of package state/cassandra, so that a deployment keeps both its
// state and its batch coordination in Cassandra.
//
// Two tables in the session's keyspace (created by Open if absent):
//
//	squall_coordinator (namespace blob, stream blob, version bigint, record blob,
//	                    PRIMARY KEY ((namespace, stream)))
//	squall_meta        (namespace blob, stream blob, partition blob, txid bigint, value blob,
//	                    PRIMARY KEY ((namespace, stream, partition), txid))
//
// SwapCoordinator is a lightweight transaction (INSERT ... IF NOT EXISTS
// for the first record, UPDATE ... IF version = ? after it) at the
// session's serial consistency, and LoadCoordinator reads at the serial
// level, so it completes any transaction left in progress: two
// coordinators of one stream cannot both write, and a swap whose outcome
// was unknown (a timeout) is resolved by the next load. Swap itself
// resolves such a timeout once by a serial read before it reports an
// error.
//
// Metadata entries are ordinary writes of one partition per (stream,
// partition), with the txid as clustering column, so PrevMeta is one
// single-partition read and CleanupMetaBefore one range deletion. Their
// write timestamps come from a clock that never goes back within a store,
// so a put, remove and put again of one entry in the same microsecond keep
// their order.
//
// Namespace separates independent users of one keyspace (the suite gives
// each test its own); streams are unique within it.
//
// Errors: timeouts, unavailable replicas and lost connections are
// retryable (package failure); a record or entry that cannot be decoded is
// coordstore.ErrCorrupt; the session's closing is not the store's: Close
// only stops this store.
package cassandrastore
