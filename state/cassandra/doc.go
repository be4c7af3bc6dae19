// Package cassandra keeps Trident state in Apache Cassandra through gocql:
// backing maps for the opaque, transactional and non-transactional map
// states, and a coordination store for batch metadata.
//
// Target: Cassandra 5.0 (the first line that runs on Java 17), CQL native
// protocol v4 through github.com/gocql/gocql v1.7.0. Reads and writes are
// single-partition statements issued with bounded concurrency; a multi-key
// IN or a multi-partition batch would lose token-aware routing.
//
// # Testing
//
// Tests here run against the real Cassandra of scripts/services.sh, found
// through internal/testenv; each test creates its own keyspace (SimpleStrategy,
// replication factor 1) and drops it at the end. See docs/testing.md.
package cassandra
