package cassandra_test

import (
	"context"
	"sync"
	"testing"

	"github.com/gocql/gocql"

	"github.com/squallstream/squall/state/cassandra"
	"github.com/squallstream/squall/state/cassandra/cassandratest"
)

// observed records what a session's observers were told.
type observed struct {
	mu      sync.Mutex
	queries []string
	batches [][]string
}

func (o *observed) ObserveQuery(_ context.Context, q gocql.ObservedQuery) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.queries = append(o.queries, q.Statement)
}

func (o *observed) ObserveBatch(_ context.Context, b gocql.ObservedBatch) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.batches = append(o.batches, b.Statements)
}

// TestUnloggedBatchAndObservers: UnloggedBatch writes every row of
// several partitions in one request, and the Config's observers see each
// statement and the batch.
func TestUnloggedBatchAndObservers(t *testing.T) {
	ctx := context.Background()
	shared := cassandratest.Session(t)
	table := shared.Keyspace() + "." + cassandratest.Table(t)
	if err := shared.CreateTable(ctx, table, "CREATE TABLE IF NOT EXISTS "+table+" (k text PRIMARY KEY, v int)"); err != nil {
		t.Fatal(err)
	}
	var obs observed
	cfg := cassandratest.Config(t)
	cfg.QueryObserver, cfg.BatchObserver = &obs, &obs
	s, err := cassandra.Connect(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	upsert := "UPDATE " + table + " SET v = ? WHERE k = ?"
	if err := s.UnloggedBatch(ctx, []gocql.BatchEntry{{Stmt: upsert, Args: []any{1, "a"}}, {Stmt: upsert, Args: []any{2, "b"}}, {Stmt: upsert, Args: []any{3, "c"}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Query(ctx, upsert, 4, "d"); err != nil {
		t.Fatal(err)
	}
	sum := 0
	it := s.Statement(ctx, "SELECT v FROM "+table+" WHERE k IN ?", []string{"a", "b", "c", "d"}).Iter()
	var v int
	for it.Scan(&v) {
		sum += v
	}
	if err := it.Close(); err != nil || sum != 10 {
		t.Fatalf("read back: sum %d, %v; want 10", sum, err)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.batches) != 1 || len(obs.batches[0]) != 3 || obs.batches[0][0] != upsert {
		t.Fatalf("batches observed: %q; want one of 3 statements", obs.batches)
	}
	if len(obs.queries) != 2 || obs.queries[0] != upsert {
		t.Fatalf("statements observed: %q; want the UPDATE and the SELECT", obs.queries)
	}
}
