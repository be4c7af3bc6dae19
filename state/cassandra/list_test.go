package cassandra_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/cassandra"
	"github.com/squallstream/squall/state/cassandra/cassandratest"
	"github.com/squallstream/squall/state/opaque"
	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/txn"
)

// listPageSize is the page size of the listing tests: small, so that a
// listing crosses many pages.
const listPageSize = 3

// scanCounter counts the key scans a session sends (its SELECTs without
// a WHERE).
type scanCounter struct{ n atomic.Int64 }

func (c *scanCounter) ObserveQuery(_ context.Context, q gocql.ObservedQuery) {
	if strings.HasPrefix(q.Statement, "SELECT") && !strings.Contains(q.Statement, "WHERE") {
		c.n.Add(1)
	}
}

// pagedSession opens a session on the test keyspace whose Keys read
// listPageSize rows per request, and counts its key scans.
func pagedSession(t *testing.T) (*cassandra.Session, *scanCounter) {
	t.Helper()
	cfg := cassandratest.Config(t)
	cfg.KeysPageSize = listPageSize
	scans := &scanCounter{}
	cfg.QueryObserver = scans
	s, err := cassandra.Connect(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, scans
}

// listPartitions lists the keys of every partition of n (table.Backing),
// by encoding, failing the test on an error, on a key listed twice, or on
// a key listed by a partition fields grouping does not route it to.
func listPartitions(t *testing.T, ctx context.Context, table *cassandra.Table, n int) map[string]state.Key {
	t.Helper()
	all := map[string]state.Key{}
	for p := range n {
		b, err := table.Backing(ctx, p, n)
		if err != nil {
			t.Fatal(err)
		}
		l, ok := b.(state.KeyLister)
		if !ok {
			t.Fatalf("%T is no state.KeyLister", b)
		}
		for k, err := range l.Keys(ctx) {
			if err != nil {
				t.Fatalf("keys of partition %d of %d: %v", p, n, err)
			}
			if _, dup := all[k.Encoded()]; dup {
				t.Fatalf("key %v listed twice (again by partition %d of %d)", k, p, n)
			}
			if want := topology.FieldsIndex(k.Values(), n); want != p {
				t.Fatalf("key %v listed by partition %d of %d, routed to %d", k, p, n, want)
			}
			all[k.Encoded()] = k
		}
	}
	return all
}

// commitOpaque runs write in a commit of txid on ms.
func commitOpaque(t *testing.T, ms state.MapState[int64], txid txn.TxID, write func(context.Context) error) {
	t.Helper()
	ctx := t.Context()
	if err := ms.BeginCommit(ctx, txid); err != nil {
		t.Fatal(err)
	}
	if err := write(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ms.Commit(ctx, txid); err != nil {
		t.Fatal(err)
	}
}

// TestKeysOfPartitions: over real Cassandra, the maps of partitions 0..n-1
// of one table (n = 1, 3, 4) list, between them, exactly the keys stored
// (keys of mixed types in the default k blob column), each once and from
// the partition fields grouping routes it to, reading three rows per
// request (so a listing crosses many pages). A removed key (null curr) is
// listed but state.Tuples skips it; a deleted row is not listed.
func TestKeysOfPartitions(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	s, scans := pagedSession(t)
	table, err := s.EnsureTable(ctx, cassandra.TableSpec{
		Name: cassandratest.Table(t), Layout: cassandra.Opaque, Values: cassandra.Typed[int64]("bigint"),
	})
	if err != nil {
		t.Fatal(err)
	}
	// Keys of mixed types: words, integers of several widths, pairs.
	var keys []state.Key
	var vals []int64
	for i := range 40 {
		var k state.Key
		switch i % 4 {
		case 0:
			k = state.MustKey(fmt.Sprintf("word-%d", i))
		case 1:
			k = state.MustKey(int64(i * 1000))
		case 2:
			k = state.MustKey(int8(i), "room")
		default:
			k = state.MustKey(uint32(1<<31+i), time.Date(2026, 1, 1, i, 0, 0, 0, time.UTC))
		}
		keys, vals = append(keys, k), append(vals, int64(i+1))
	}
	b, err := table.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ms := opaque.New[int64](b, state.MapOptions[int64]{})
	commitOpaque(t, ms, 1, func(ctx context.Context) error { return ms.MultiPut(ctx, keys, vals) })
	removed, deleted := keys[5], keys[6]
	commitOpaque(t, ms, 2, func(ctx context.Context) error {
		return ms.MultiRemove(ctx, []state.Key{removed})
	})
	if err := b.MultiDelete(ctx, []state.Key{deleted}); err != nil {
		t.Fatal(err)
	}

	want := map[string]state.Key{}
	rows := map[string]int64{}
	for i, k := range keys {
		if !k.Equal(deleted) {
			want[k.Encoded()] = k
		}
		if !k.Equal(deleted) && !k.Equal(removed) {
			rows[fmt.Sprint(k.Values())] = vals[i]
		}
	}
	for _, n := range []int{1, 3, 4} {
		t.Run(fmt.Sprintf("%d partitions", n), func(t *testing.T) {
			before := scans.n.Load()
			got := listPartitions(t, ctx, table, n)
			if !maps.Equal(encodings(got), encodings(want)) {
				t.Fatalf("listed %d keys %v\nwant %d keys %v", len(got), sortedKeys(got), len(want), sortedKeys(want))
			}
			// Every partition scans the whole table: at least
			// len(want)/listPageSize requests each.
			if scanned, min := scans.n.Load()-before, int64(n*len(want)/listPageSize); scanned < min {
				t.Fatalf("%d key scan requests for %d partitions of %d rows, want at least %d", scanned, n, len(want), min)
			}
			// Tuples over each partition: the stored values, the removed
			// key skipped.
			gotRows := map[string]int64{}
			for p := range n {
				pb, err := table.Backing(ctx, p, n)
				if err != nil {
					t.Fatal(err)
				}
				pms := opaque.New[int64](pb, state.MapOptions[int64]{})
				for row, err := range state.Tuples(ctx, pms, state.ListKeys(ctx, pb)) {
					if err != nil {
						t.Fatal(err)
					}
					key := fmt.Sprint(row[:len(row)-1])
					if _, dup := gotRows[key]; dup {
						t.Fatalf("row %v listed twice", row)
					}
					gotRows[key] = row[len(row)-1].(int64)
				}
			}
			if !maps.Equal(gotRows, rows) {
				t.Fatalf("tuples %v\nwant %v", gotRows, rows)
			}
		})
	}
}

// TestKeysOfTypedColumns: a table with typed key columns (room text, hour
// timestamp, seq int, as the room-presence timelines) lists its keys
// rebuilt from the columns, the same keys as written (an int64 in the int
// column, an hour in another zone), each once over 3 partitions.
func TestKeysOfTypedColumns(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	s, _ := pagedSession(t)
	table, err := s.EnsureTable(ctx, cassandra.TableSpec{
		Name: cassandratest.Table(t), Layout: cassandra.Opaque, Values: cassandra.Typed[int64]("bigint"),
		Keys: []cassandra.Column{{Name: "room", Type: "text"}, {Name: "hour", Type: "timestamp"}, {Name: "seq", Type: "int"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	paris := time.FixedZone("CET", 3600)
	want := map[string]state.Key{}
	var keys []state.Key
	for i := range 20 {
		k := state.MustKey(fmt.Sprintf("room-%d", i%5), time.Date(2026, 3, 1, i, 0, 0, 0, paris), int64(i-10))
		keys = append(keys, k)
		want[k.Encoded()] = k
	}
	b, err := table.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ms := opaque.New[int64](b, state.MapOptions[int64]{})
	commitOpaque(t, ms, 1, func(ctx context.Context) error { return ms.MultiPut(ctx, keys, make([]int64, len(keys))) })
	got := listPartitions(t, ctx, table, 3)
	if !maps.Equal(encodings(got), encodings(want)) {
		t.Fatalf("listed %v\nwant %v", sortedKeys(got), sortedKeys(want))
	}
	for _, k := range got {
		if room, ok := k.Values()[0].(string); !ok || !strings.HasPrefix(room, "room-") {
			t.Fatalf("key %v: room %#v", k, k.Values()[0])
		}
	}
}

// TestKeysErrors: a listing on a closed session yields state.ErrClosed
// with the zero key and ends; Backing refuses a partition out of range.
func TestKeysErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	s, _ := pagedSession(t)
	table, err := s.EnsureTable(ctx, cassandra.TableSpec{Name: cassandratest.Table(t)})
	if err != nil {
		t.Fatal(err)
	}
	for _, pn := range [][2]int{{0, 0}, {3, 3}, {-1, 2}} {
		if _, err := table.Backing(ctx, pn[0], pn[1]); !errors.Is(err, cassandra.ErrConfig) {
			t.Errorf("Backing(%d, %d): %v, want cassandra.ErrConfig", pn[0], pn[1], err)
		}
	}
	b, err := table.Backing(ctx, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	n := 0
	for k, err := range b.(state.KeyLister).Keys(ctx) {
		n++
		if !errors.Is(err, state.ErrClosed) || k.Len() != 0 {
			t.Fatalf("keys after Close: %v, %v; want the zero key and state.ErrClosed", k, err)
		}
	}
	if n != 1 {
		t.Fatalf("keys after Close yielded %d times, want once", n)
	}
}

func encodings(keys map[string]state.Key) map[string]bool {
	out := make(map[string]bool, len(keys))
	for enc := range keys {
		out[enc] = true
	}
	return out
}

func sortedKeys(keys map[string]state.Key) []string {
	var out []string
	for _, k := range keys {
		out = append(out, k.String())
	}
	slices.Sort(out)
	return out
}
