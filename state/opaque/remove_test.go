package opaque_test

import (
	"context"
	"errors"
	"testing"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/opaque"
	"github.com/squallstream/squall/txn"
)

// TestValueRemove: Storm's OpaqueValue with a null curr. A removal by a
// later batch keeps curr as prev, a removal by the batch that wrote curr
// (a replay) keeps prev; the tombstone reads absent to its batch's
// successors and prev to a replay of its batch.
func TestValueRemove(t *testing.T) {
	ov := opaque.Value[string]{TxID: 8, Curr: "v1", Prev: "v0", HasPrev: true}

	later, err := ov.Remove(9)
	if err != nil || later != (opaque.Value[string]{TxID: 9, Prev: "v1", HasPrev: true, Removed: true}) {
		t.Errorf("remove(9) = %+v, %v", later, err)
	}
	replay, err := ov.Remove(8)
	if err != nil || replay != (opaque.Value[string]{TxID: 8, Prev: "v0", HasPrev: true, Removed: true}) {
		t.Errorf("remove(8) = %+v, %v", replay, err)
	}
	if _, err := ov.Remove(7); !errors.Is(err, state.ErrBehind) {
		t.Errorf("remove(7) = %v, want ErrBehind", err)
	}
	if _, err := ov.Remove(0); !errors.Is(err, state.ErrNoTxID) {
		t.Errorf("remove(0) = %v, want ErrNoTxID", err)
	}
	for _, tc := range []struct {
		batch txn.TxID
		want  state.Entry[string]
	}{
		{0, state.Entry[string]{}},
		{10, state.Entry[string]{}},
		{9, state.Entry[string]{Val: "v1", Found: true}},
	} {
		if e, err := later.Get(tc.batch); err != nil || e != tc.want {
			t.Errorf("tombstone get(%v) = %+v, %v; want %+v", tc.batch, e, err, tc.want)
		}
	}
	// Writing over a tombstone: from absent for a later batch, prev kept
	// for its own batch.
	if v, err := later.Update(10, "v2"); err != nil || v != (opaque.Value[string]{TxID: 10, Curr: "v2"}) {
		t.Errorf("update(10) of the tombstone = %+v, %v", v, err)
	}
	if v, err := later.Update(9, "v2"); err != nil || v != (opaque.Value[string]{TxID: 9, Curr: "v2", Prev: "v1", HasPrev: true}) {
		t.Errorf("update(9) of the tombstone = %+v, %v", v, err)
	}
	// The stored form round-trips.
	b, err := opaque.Encode(later, nil)
	if err != nil {
		t.Fatal(err)
	}
	if back, err := opaque.Decode[string](b, nil); err != nil || back != later {
		t.Errorf("Decode(Encode(%+v)) = %+v, %v", later, back, err)
	}
}

// TestMultiGetCommittedTombstone: a key removed by batch 2 is absent as
// of txid 2 and has batch 1's value as of txid 1.
func TestMultiGetCommittedTombstone(t *testing.T) {
	ctx := context.Background()
	m := opaque.New[int](state.NewMemory("m"), state.MapOptions[int]{})
	a := []state.Key{state.MustKey("a")}
	if err := m.BeginCommit(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := m.MultiPut(ctx, a, []int{1}); err != nil {
		t.Fatal(err)
	}
	if err := m.Commit(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := m.BeginCommit(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := m.MultiRemove(ctx, a); err != nil {
		t.Fatal(err)
	}
	for committed, want := range map[txn.TxID]state.Entry[int]{1: {Val: 1, Found: true}, 2: {}} {
		got, err := m.MultiGetCommitted(ctx, committed, a)
		if err != nil || got[0] != want {
			t.Errorf("as of %v: %+v, %v; want %+v", committed, got, err, want)
		}
	}
	if err := m.MultiRemove(ctx, a); err != nil { // twice in one commit
		t.Fatal(err)
	}
	if err := m.Commit(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := m.MultiRemove(ctx, a); !errors.Is(err, state.ErrNoTxID) {
		t.Errorf("MultiRemove outside a commit: %v, want ErrNoTxID", err)
	}
}
