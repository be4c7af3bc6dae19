package cassandra_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/squallstream/squall/internal/testenv"
)

// TestRoundTrip proves that gocql reaches the real Cassandra: it creates a
// keyspace and a table shaped like an opaque value (txid, curr, prev), writes
// and reads a row, checks a lightweight transaction (what a coordination
// store uses for fencing), and drops the keyspace.
func TestRoundTrip(t *testing.T) {
	hosts := testenv.CassandraHosts(t)

	cluster := gocql.NewCluster(hosts...)
	cluster.Consistency = gocql.One
	cluster.Timeout = 30 * time.Second // DDL on a busy two-core machine can be slow
	cluster.ConnectTimeout = 10 * time.Second
	session, err := cluster.CreateSession()
	if err != nil {
		t.Fatalf("connect to %v: %v", hosts, err)
	}
	defer session.Close()

	ks := testenv.UniqueName(t, "squall")
	exec := func(stmt string, args ...any) {
		t.Helper()
		if err := session.Query(stmt, args...).Exec(); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	exec(`CREATE KEYSPACE ` + ks + ` WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`)
	defer func() {
		if err := session.Query(`DROP KEYSPACE IF EXISTS ` + ks).Exec(); err != nil {
			t.Errorf("drop keyspace %s: %v", ks, err)
		}
	}()
	exec(`CREATE TABLE ` + ks + `.opaque (k text PRIMARY KEY, txid bigint, curr blob, prev blob)`)

	exec(`INSERT INTO `+ks+`.opaque (k, txid, curr, prev) VALUES (?, ?, ?, ?)`, "room-7", int64(3), []byte("c3"), []byte("c2"))
	exec(`UPDATE `+ks+`.opaque SET txid = ?, curr = ?, prev = ? WHERE k = ?`, int64(4), []byte("c4"), []byte("c3"), "room-7")

	var (
		txid       int64
		curr, prev []byte
	)
	if err := session.Query(`SELECT txid, curr, prev FROM `+ks+`.opaque WHERE k = ?`, "room-7").Scan(&txid, &curr, &prev); err != nil {
		t.Fatalf("select: %v", err)
	}
	if txid != 4 || !bytes.Equal(curr, []byte("c4")) || !bytes.Equal(prev, []byte("c3")) {
		t.Errorf("read txid=%d curr=%q prev=%q, want 4 c4 c3", txid, curr, prev)
	}
	if err := session.Query(`SELECT txid FROM `+ks+`.opaque WHERE k = ?`, "absent").Scan(&txid); err != gocql.ErrNotFound {
		t.Errorf("select of a missing key: err = %v, want gocql.ErrNotFound", err)
	}

	// Lightweight transactions (Paxos) work on the single node.
	exec(`CREATE TABLE ` + ks + `.leases (name text PRIMARY KEY, owner text, epoch bigint)`)
	lease := `INSERT INTO ` + ks + `.leases (name, owner, epoch) VALUES (?, ?, ?) IF NOT EXISTS`
	for i, want := range []bool{true, false} {
		m := map[string]any{}
		applied, err := session.Query(lease, "coordinator", "worker-"+string(rune('a'+i)), int64(i+1)).
			SerialConsistency(gocql.Serial).MapScanCAS(m)
		if err != nil {
			t.Fatalf("lease insert %d: %v", i, err)
		}
		if applied != want {
			t.Errorf("lease insert %d: applied = %v, want %v (row %v)", i, applied, want, m)
		}
		if !applied && m["owner"] != "worker-a" {
			t.Errorf("failed lease insert reports owner %v, want worker-a", m["owner"])
		}
	}
}
