package cassandra_test

import (
	"testing"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/cassandra"
	"github.com/squallstream/squall/state/cassandra/cassandratest"
	"github.com/squallstream/squall/state/opaque"
	"github.com/squallstream/squall/state/statetest"
	"github.com/squallstream/squall/txn"
)

// openMap creates a new table of spec (with a fresh name) and opens a map
// over it.
func openMap(t *testing.T, spec cassandra.TableSpec) *cassandra.Map {
	t.Helper()
	s := cassandratest.Session(t)
	spec.Name = cassandratest.Table(t)
	table, err := s.EnsureTable(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	m, err := table.Open(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestConformance runs the backing-map suite on the envelope layout (the
// only one that takes arbitrary bytes), with keys as their encoding.
func TestConformance(t *testing.T) {
	statetest.TestBackingMap(t, func(t *testing.T) state.BackingMap[[]byte] {
		return openMap(t, cassandra.TableSpec{})
	})
}

// TestLayouts runs Storm's map tables and the exactly-once model of each
// flavour on its own column layout, with blob and typed values.
func TestLayouts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layout cassandra.Layout
		values cassandra.Mapper
		run    []func(*testing.T, state.BackingMap[[]byte])
	}{
		{"opaque", cassandra.Opaque, nil, []func(*testing.T, state.BackingMap[[]byte]){statetest.TestOpaqueMapTable, statetest.TestOpaqueModel}},
		{"transactional", cassandra.Transactional, nil, []func(*testing.T, state.BackingMap[[]byte]){statetest.TestTransactionalMapTable, statetest.TestTransactionalModel}},
		{"nontransactional", cassandra.NonTransactional, nil, []func(*testing.T, state.BackingMap[[]byte]){statetest.TestNonTransactionalMapTable}},
	} {
		for i, run := range tc.run {
			t.Run(tc.name+"/"+[]string{"table", "model"}[i], func(t *testing.T) {
				run(t, openMap(t, cassandra.TableSpec{Layout: tc.layout, Values: tc.values}))
			})
		}
	}
}

// TestRemoveLayouts runs the removal tables of each flavour on its own
// column layout, where a tombstone is a null value column (Storm's null
// curr), with blob and typed values, and on the envelope layout.
func TestRemoveLayouts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layout cassandra.Layout
		run    func(*testing.T, state.BackingMap[[]byte])
	}{
		{"opaque", cassandra.Opaque, statetest.TestOpaqueRemoveTable},
		{"transactional", cassandra.Transactional, statetest.TestTransactionalRemoveTable},
		{"nontransactional", cassandra.NonTransactional, statetest.TestNonTransactionalRemoveTable},
	} {
		for _, values := range []cassandra.Mapper{nil, cassandra.Typed[int64]("bigint")} {
			name := tc.name + "/blob"
			if values != nil {
				name = tc.name + "/bigint"
			}
			t.Run(name, func(t *testing.T) {
				tc.run(t, openMap(t, cassandra.TableSpec{Layout: tc.layout, Values: values}))
			})
		}
	}
}

// TestTombstoneColumns: an opaque removal stores null in curr and keeps
// prev, as Storm's OpaqueValue with a null curr, readable with CQL.
func TestTombstoneColumns(t *testing.T) {
	ctx := t.Context()
	b := openMap(t, cassandra.TableSpec{Layout: cassandra.Opaque, Values: cassandra.Typed[int64]("bigint"),
		Keys: []cassandra.Column{{Name: "word", Type: "text"}}})
	m := opaque.New[int64](b, state.MapOptions[int64]{})
	cow := []state.Key{state.MustKey("cow")}
	for tx, step := range []func() error{
		func() error { return m.MultiPut(ctx, cow, []int64{4}) },
		func() error { return m.MultiRemove(ctx, cow) },
	} {
		if err := m.BeginCommit(ctx, txn.TxID(tx+1)); err != nil {
			t.Fatal(err)
		}
		if err := step(); err != nil {
			t.Fatal(err)
		}
		if err := m.Commit(ctx, txn.TxID(tx+1)); err != nil {
			t.Fatal(err)
		}
	}
	var (
		txid int64
		curr *int64
		prev *int64
	)
	err := cassandratest.Session(t).Gocql().Query(`SELECT txid, curr, prev FROM `+b.Table().Name()+` WHERE word = 'cow'`).
		Scan(&txid, &curr, &prev)
	if err != nil || txid != 2 || curr != nil || prev == nil || *prev != 4 {
		t.Errorf("row after the removal by txid 2: txid %d, curr %v, prev %v, %v; want 2, null, 4", txid, curr, prev, err)
	}
	if err := m.BeginCommit(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if n := cassandratest.Session(t).Gocql().Query(`SELECT txid FROM ` + b.Table().Name() + ` WHERE word = 'cow'`).Iter().NumRows(); n != 0 {
		t.Errorf("after txid 3 began: %d rows, want the tombstone deleted", n)
	}
}
