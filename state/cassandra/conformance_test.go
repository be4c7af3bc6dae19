package cassandra_test

import (
	"testing"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/cassandra"
	"github.com/squallstream/squall/state/cassandra/cassandratest"
	"github.com/squallstream/squall/state/statetest"
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
