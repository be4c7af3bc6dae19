// Package cassandra keeps Trident state in Apache Cassandra through gocql:
// backing maps for the opaque, transactional and non-transactional map
// states, a schema helper, and the session a coordination store
// (trident/coordstore/cassandrastore) runs on. See docs/cassandra.md.
//
// Connect opens a Session for one keyspace; EnsureKeyspace and EnsureTable
// create what is missing and OpenTable checks an existing table's columns
// against a TableSpec. A Table's Open (or Backing, whose signature is
// trident.BackingFactory's) returns a Map, a state.BackingMap[[]byte]:
//
//	table, err := s.EnsureTable(ctx, cassandra.TableSpec{
//		Name:   "counts",
//		Layout: cassandra.Opaque,
//		Keys:   []cassandra.Column{{Name: "word", Type: "text"}},
//		Values: cassandra.Typed[int64]("bigint"),
//	})
//	counts := trident.Opaque[int64]("counts", table.Backing)
//
// Target: Cassandra 3.0 or later (tested on 5.0), CQL native protocol v4
// through github.com/gocql/gocql v1.7.0.
//
// # Ordering and concurrency
//
// Reads and writes are single-partition statements, one per distinct key,
// issued concurrently with at most Config.MaxInFlight of a session in
// flight; no multi-partition IN and no batch statements, so each goes to a
// replica of its key (token-aware routing). A MultiPut that fails may have
// written any subset of its keys. Writes carry timestamps from the map's
// fence: a map opened later wins over one opened earlier, and a later
// MultiPut of one map over an earlier one, whatever order the writes
// arrive in (see fence.go and docs/cassandra.md).
//
// # Listing
//
// A Map is a state.KeyLister, so ops.TupleCollectionGet reads a whole
// state held in Cassandra: the map of one partition (Backing) scans the
// table every partition shares, a page at a time, and keeps the keys
// trident's fields grouping routes to it, so each key is listed once. A
// query costs a full table scan per partition (see Map.Keys).
//
// # Errors
//
// Timeouts, unavailable or overloaded replicas and lost connections are
// retryable (package failure): the batch is replayed. Authentication,
// permission, syntax and schema errors are fatal, and are reported at
// start by Connect, EnsureTable and OpenTable with a message saying what
// to fix.
//
// # Testing
//
// Tests here run against the real Cassandra of scripts/services.sh, found
// through internal/testenv; package cassandratest gives each test binary
// one keyspace (SimpleStrategy, replication factor 1) and drops it at the
// end. See docs/testing.md.
package cassandra
