package cassandra_test

import (
	"errors"
	"io"
	"log"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/squallstream/squall/internal/testenv"
)

// TestCassandraStopStart proves what fault-injection tests rely on: while
// Cassandra is stopped (testenv.StopService) a query fails with a connection
// error rather than hanging or being answered; once it is started again
// (testenv.StartService) a new session reads the row written before the stop
// and writes a new one, and the old session has reconnected on its own.
func TestCassandraStopStart(t *testing.T) {
	hosts := testenv.CassandraHosts(t)
	testenv.RequireExclusive(t)

	cluster := gocql.NewCluster(hosts...)
	cluster.Consistency = gocql.One
	cluster.Timeout = 30 * time.Second // DDL on a busy two-core machine can be slow
	cluster.ConnectTimeout = 10 * time.Second
	// While the node is down gocql logs a failed reconnection every second.
	cluster.Logger = log.New(io.Discard, "", 0)
	session, err := cluster.CreateSession()
	if err != nil {
		t.Fatalf("connect to %v: %v", hosts, err)
	}
	defer session.Close()

	ks := testenv.UniqueName(t, "squall")
	exec := func(s *gocql.Session, stmt string, args ...any) {
		t.Helper()
		if err := s.Query(stmt, args...).Exec(); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	exec(session, `CREATE KEYSPACE `+ks+` WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`)
	// A clean-up, not a defer: it must run after StopService's clean-up has
	// made sure Cassandra runs again, and with a session of its own.
	t.Cleanup(func() {
		s, err := cluster.CreateSession()
		if err == nil {
			err = s.Query(`DROP KEYSPACE IF EXISTS ` + ks).Exec()
			s.Close()
		}
		if err != nil {
			t.Errorf("drop keyspace %s: %v", ks, err)
		}
	})
	exec(session, `CREATE TABLE `+ks+`.opaque (k text PRIMARY KEY, txid bigint, curr blob)`)
	exec(session, `INSERT INTO `+ks+`.opaque (k, txid, curr) VALUES (?, ?, ?)`, "before", int64(7), []byte("c7"))
	read := func(s *gocql.Session, k string) (txid int64, curr string, err error) {
		var b []byte
		err = s.Query(`SELECT txid, curr FROM `+ks+`.opaque WHERE k = ?`, k).Scan(&txid, &b)
		return txid, string(b), err
	}

	testenv.StopService(t, "cassandra")

	if _, _, err := read(session, "before"); !isConnError(err) {
		t.Errorf("query on the open session while Cassandra is stopped: err = %v, want a connection error", err)
	}
	if s, err := cluster.CreateSession(); err == nil {
		s.Close()
		t.Errorf("new session while Cassandra is stopped: no error")
	} else if !isConnError(err) {
		t.Errorf("new session while Cassandra is stopped: err = %v, want a connection error", err)
	}

	testenv.StartService(t, "cassandra")

	fresh, err := cluster.CreateSession()
	if err != nil {
		t.Fatalf("new session after the start: %v", err)
	}
	defer fresh.Close()
	if txid, curr, err := read(fresh, "before"); err != nil || txid != 7 || curr != "c7" {
		t.Fatalf("row written before the stop: txid=%d curr=%q err=%v, want 7 c7", txid, curr, err)
	}
	exec(fresh, `INSERT INTO `+ks+`.opaque (k, txid, curr) VALUES (?, ?, ?)`, "after", int64(8), []byte("c8"))
	if txid, curr, err := read(fresh, "after"); err != nil || txid != 8 || curr != "c8" {
		t.Fatalf("row written after the start: txid=%d curr=%q err=%v, want 8 c8", txid, curr, err)
	}

	// gocql reconnects the old session in the background (its control
	// connection retries every second).
	deadline := time.Now().Add(30 * time.Second)
	for {
		txid, _, err := read(session, "after")
		if err == nil && txid == 8 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session opened before the stop did not recover within 30s: txid=%d err=%v", txid, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// isConnError reports whether err says the client could not reach Cassandra
// (as opposed to an answer from it, such as a timeout or "unavailable").
func isConnError(err error) bool {
	var netErr net.Error
	switch {
	case err == nil:
		return false
	case errors.Is(err, gocql.ErrNoConnections), errors.Is(err, gocql.ErrConnectionClosed),
		errors.Is(err, gocql.ErrNoConnectionsStarted), errors.Is(err, io.EOF), errors.As(err, &netErr):
		return true
	}
	// Session creation flattens the dial error into its message.
	return strings.Contains(err.Error(), "connection refused")
}
