package state_test

import (
	"testing"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/statetest"
)

func TestMemoryConformance(t *testing.T) {
	statetest.TestBackingMap(t, func(*testing.T) state.BackingMap[[]byte] {
		return state.NewMemory("")
	})
}

func TestMemoryCopiesValues(t *testing.T) {
	m := state.NewMemory("copies")
	v := []byte("abc")
	if err := m.MultiPut(t.Context(), []state.Key{state.MustKey("a")}, [][]byte{v}); err != nil {
		t.Fatal(err)
	}
	v[0] = 'X'
	es, err := m.MultiGet(t.Context(), []state.Key{state.MustKey("a")})
	if err != nil {
		t.Fatal(err)
	}
	es[0].Val[1] = 'Y'
	es, _ = m.MultiGet(t.Context(), []state.Key{state.MustKey("a")})
	if string(es[0].Val) != "abc" {
		t.Errorf("stored value changed through an alias: %q", es[0].Val)
	}
	if m.Len() != 1 || m.Name() != "copies" {
		t.Errorf("Len() = %d, Name() = %q", m.Len(), m.Name())
	}
}
