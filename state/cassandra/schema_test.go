package cassandra_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/cassandra"
	"github.com/squallstream/squall/state/cassandra/cassandratest"
	"github.com/squallstream/squall/state/opaque"
	"github.com/squallstream/squall/txn"
)

// TestTypedColumns keys a table by (room text, hour timestamp) and keeps an
// opaque count as bigint columns, as the room-presence example does, and
// reads the columns back with CQL.
func TestTypedColumns(t *testing.T) {
	ctx := t.Context()
	s := cassandratest.Session(t)
	spec := cassandra.TableSpec{
		Name:   cassandratest.Table(t),
		Layout: cassandra.Opaque,
		Keys:   []cassandra.Column{{Name: "room", Type: "text"}, {Name: "hour", Type: "timestamp"}},
		Values: cassandra.Typed[int64]("bigint"),
	}
	table, err := s.EnsureTable(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	b, err := table.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m := opaque.New[int64](b, state.MapOptions[int64]{Name: "presence"})
	hour := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	keys := []state.Key{state.MustKey("room-7", hour), state.MustKey("room-8", hour)}
	add := func(txid txn.TxID, n int64) {
		t.Helper()
		if err := m.BeginCommit(ctx, txid); err != nil {
			t.Fatal(err)
		}
		add := state.ValueUpdaterFunc[int64](func(old int64, _ bool) int64 { return old + n })
		ups := []state.ValueUpdater[int64]{add, add}
		if _, err := m.MultiUpdate(ctx, keys, ups); err != nil {
			t.Fatal(err)
		}
		if err := m.Commit(ctx, txid); err != nil {
			t.Fatal(err)
		}
	}
	add(1, 5)
	add(2, 3)
	add(2, 4) // a replay of 2 with other content: base is prev (5)
	var txid, curr, prev int64
	err = s.Gocql().Query(`SELECT txid, curr, prev FROM `+table.Name()+` WHERE room = ? AND hour = ?`, "room-7", hour).
		Scan(&txid, &curr, &prev)
	if err != nil {
		t.Fatal(err)
	}
	if txid != 2 || curr != 9 || prev != 5 {
		t.Fatalf("row (room-7, %v) = txid %d curr %d prev %d, want 2 9 5", hour, txid, curr, prev)
	}
	es, err := m.MultiGet(ctx, keys)
	if err != nil || !es[1].Found || es[1].Val != 9 {
		t.Fatalf("MultiGet = %+v, %v; want 9", es, err)
	}
	// A key with the wrong number of values is refused.
	if err := b.MultiPut(ctx, []state.Key{state.MustKey("room-7")}, [][]byte{{0x93, 0x21, 1, 1}}); !errors.Is(err, state.ErrBadKey) {
		t.Errorf("put of a one-value key: %v, want state.ErrBadKey", err)
	}
}

// TestSchemaMismatch: a table whose columns differ from the spec fails at
// open with a message naming each difference; a missing table too.
func TestSchemaMismatch(t *testing.T) {
	ctx := t.Context()
	s := cassandratest.Session(t)
	name := cassandratest.Table(t)
	if _, err := s.EnsureTable(ctx, cassandra.TableSpec{Name: cassandratest.Table(t)}); err != nil {
		t.Fatal(err) // creates the fencing table
	}
	if _, err := s.OpenTable(ctx, cassandra.TableSpec{Name: name}); !errors.Is(err, cassandra.ErrSchema) ||
		!strings.Contains(err.Error(), "does not exist") {
		t.Errorf("open of a missing table: %v", err)
	}
	err := s.CreateTable(ctx, name, `CREATE TABLE `+s.Keyspace()+`.`+name+` (room text, hour bigint, txid int, curr blob, PRIMARY KEY (room, hour))`)
	if err != nil {
		t.Fatal(err)
	}
	spec := cassandra.TableSpec{
		Name:   name,
		Layout: cassandra.Opaque,
		Keys:   []cassandra.Column{{Name: "room", Type: "text"}, {Name: "hour", Type: "timestamp"}},
	}
	_, err = s.EnsureTable(ctx, spec)
	if !errors.Is(err, cassandra.ErrSchema) {
		t.Fatalf("EnsureTable over a different table: %v, want ErrSchema", err)
	}
	for _, want := range []string{
		"column hour is clustering at position 0, want partition key column 1",
		"value column txid has type int, want bigint",
		"value column prev blob is missing",
		name,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// TestConfigValidate names each problem of a bad Config and TableSpec.
func TestConfigValidate(t *testing.T) {
	err := cassandra.Config{Keyspace: "1bad", MaxInFlight: -1, Password: "x"}.Validate()
	for _, want := range []string{"no Hosts", `Keyspace "1bad"`, "MaxInFlight", "Password without Username"} {
		if !errors.Is(err, cassandra.ErrConfig) || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v does not say %q", err, want)
		}
	}
	if err := (cassandra.Config{Hosts: []string{"h"}, Keyspace: "ok"}).Validate(); err != nil {
		t.Errorf("Validate of a minimal config: %v", err)
	}
	err = cassandra.TableSpec{Name: "t", Keys: []cassandra.Column{{Name: "txid", Type: "text"}, {Name: "a"}},
		Values: cassandra.Typed[int64]("bigint")}.Validate()
	for _, want := range []string{"name of a value column", `"a" has no type`, "does not apply to the envelope"} {
		if !errors.Is(err, cassandra.ErrConfig) || !strings.Contains(err.Error(), want) {
			t.Errorf("TableSpec.Validate: %v does not say %q", err, want)
		}
	}
}
