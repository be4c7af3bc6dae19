// Package cassandratest gives the tests of a package one keyspace on the
// real Cassandra of scripts/services.sh (found through internal/testenv),
// created on first use and dropped when the test binary ends, so a test
// run makes few schema changes (Cassandra's schema agreement is slow):
//
//	func TestMain(m *testing.M) { cassandratest.Main(m) }
//
//	func TestX(t *testing.T) {
//		s := cassandratest.Session(t)
//		table, err := s.EnsureTable(t.Context(), cassandra.TableSpec{Name: cassandratest.Table(t), ...})
//	}
//
// A child process that a test re-executes reuses its parent's keyspace:
// the parent passes KeyspaceVar in the child's environment and the child
// never drops it.
package cassandratest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/squallstream/squall/internal/testenv"
	"github.com/squallstream/squall/state/cassandra"
)

// KeyspaceVar names a keyspace to reuse instead of creating one.
const KeyspaceVar = "SQUALL_TEST_CASSANDRA_KEYSPACE"

var shared struct {
	mu      sync.Mutex
	cfg     cassandra.Config
	session *cassandra.Session
	owned   bool // created here: drop it at the end
	tables  atomic.Int64
}

// Main runs the tests, drops the keyspace if this process created it,
// closes the shared session and checks for leaked goroutines.
func Main(m *testing.M) {
	code := m.Run()
	shared.mu.Lock()
	if s := shared.session; s != nil {
		if shared.owned {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			if err := s.DropKeyspace(ctx); err != nil {
				fmt.Fprintf(os.Stderr, "cassandratest: drop keyspace %s: %v\n", s.Keyspace(), err)
				code = max(code, 1)
			}
			cancel()
		}
		s.Close()
		shared.session = nil
	}
	shared.mu.Unlock()
	if code == 0 {
		// gocql handles the schema event of the dropped keyspace in a
		// goroutine of its own that Session.Close does not stop; it ends
		// within gocql's MaxWaitSchemaAgreement.
		if err := goleak.Find(goleak.IgnoreTopFunction("github.com/gocql/gocql.(*Conn).awaitSchemaAgreement")); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// Config returns the configuration of the shared keyspace (hosts from
// testenv, generous timeouts for a loaded two-core machine), creating the
// keyspace on first use. It skips the test, or fails it under CI, when
// Cassandra is not configured.
func Config(t testing.TB) cassandra.Config {
	t.Helper()
	Session(t)
	return shared.cfg
}

// Session returns the shared session (do not close it).
func Session(t testing.TB) *cassandra.Session {
	t.Helper()
	hosts := testenv.CassandraHosts(t)
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.session != nil {
		return shared.session
	}
	ks, owned := os.Getenv(KeyspaceVar), false
	if ks == "" {
		ks, owned = testenv.UniqueName(t, "squall"), true
	}
	cfg := cassandra.Config{
		Hosts:          hosts,
		Keyspace:       ks,
		Timeout:        30 * time.Second, // DDL on a busy two-core machine can be slow
		ConnectTimeout: 10 * time.Second,
	}
	s, err := cassandra.Connect(context.Background(), cfg)
	if err != nil {
		t.Fatalf("cassandratest: %v", err)
	}
	if owned {
		if err := s.EnsureKeyspace(context.Background(), cassandra.SimpleReplication(1)); err != nil {
			s.Close()
			t.Fatalf("cassandratest: %v", err)
		}
	}
	shared.cfg, shared.session, shared.owned = cfg, s, owned
	return s
}

// Connect opens a new session on the shared keyspace, closed when the test
// ends.
func Connect(t testing.TB) *cassandra.Session {
	t.Helper()
	s, err := cassandra.Connect(context.Background(), Config(t))
	if err != nil {
		t.Fatalf("cassandratest: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Table returns a table name not used before in this process: "t" and a
// counter, with the process id so that a parent and its children differ.
func Table(t testing.TB) string {
	return fmt.Sprintf("t%d_%d", os.Getpid(), shared.tables.Add(1))
}
