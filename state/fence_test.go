package state_test

import (
	"context"
	"errors"
	"testing"

	"github.com/squallstream/squall/state"
)

// TestMemoryFencing: once a generation of an owner is admitted (at open,
// or by a write), writes of older generations of that owner are rejected
// and store nothing; other owners and unfenced writes are not affected.
func TestMemoryFencing(t *testing.T) {
	ctx := t.Context()
	gen := func(owner string, g state.Generation) context.Context {
		return state.WithFence(ctx, state.Fence{Owner: owner, Generation: g})
	}
	m := state.NewMemory("m")
	k := []state.Key{state.MustKey("k")}
	put := func(ctx context.Context, v string) error { return m.MultiPut(ctx, k, [][]byte{[]byte(v)}) }
	want := func(v string) {
		t.Helper()
		es, err := m.MultiGet(ctx, k)
		if err != nil || string(es[0].Val) != v {
			t.Fatalf("value = %q, %v; want %q", es[0].Val, err, v)
		}
	}
	wantFenced := func(what string, err error, current state.Generation) {
		t.Helper()
		var fe *state.FencedError
		if !errors.As(err, &fe) || !errors.Is(err, state.ErrFenced) || fe.Current != current || fe.Where != "m" {
			t.Fatalf("%s = %v, want a *FencedError with current generation %v", what, err, current)
		}
	}

	if err := put(gen("topo", 1), "gen1"); err != nil {
		t.Fatal(err)
	}
	if err := m.Admit(gen("topo", 2)); err != nil {
		t.Fatal(err)
	}
	wantFenced("a write of generation 1 after generation 2 opened", put(gen("topo", 1), "late"), 2)
	wantFenced("Admit of generation 1 after generation 2", m.Admit(gen("topo", 1)), 2)
	want("gen1")
	if err := put(gen("topo", 3), "gen3"); err != nil {
		t.Fatal(err)
	}
	wantFenced("a write of generation 2 after generation 3 wrote", put(gen("topo", 2), "late"), 3)
	want("gen3")
	if err := put(gen("other", 1), "other"); err != nil {
		t.Fatalf("another owner: %v", err)
	}
	if err := put(ctx, "tool"); err != nil {
		t.Fatalf("an unfenced write: %v", err)
	}
	want("tool")
}
