package opaque_test

import (
	"context"
	"testing"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/opaque"
	"github.com/squallstream/squall/txn"
)

// TestMultiGetCommitted: batch 2 wrote but did not commit; as of txid 1 a
// key it updated has batch 1's value and a key it created is absent; as
// of txid 2 both have batch 2's values.
func TestMultiGetCommitted(t *testing.T) {
	ctx := context.Background()
	m := opaque.New[int](state.NewMemory("m"), state.MapOptions[int]{})
	a, b := state.MustKey("a"), state.MustKey("b")
	put := func(txid txn.TxID, keys []state.Key, vals []int) {
		t.Helper()
		if err := m.BeginCommit(ctx, txid); err != nil {
			t.Fatal(err)
		}
		if err := m.MultiPut(ctx, keys, vals); err != nil {
			t.Fatal(err)
		}
	}
	put(1, []state.Key{a}, []int{1})
	if err := m.Commit(ctx, 1); err != nil {
		t.Fatal(err)
	}
	put(2, []state.Key{a, b}, []int{5, 3}) // no Commit: its commit failed

	for _, tc := range []struct {
		committed txn.TxID
		want      []state.Entry[int]
	}{
		{1, []state.Entry[int]{{Val: 1, Found: true}, {}}},
		{2, []state.Entry[int]{{Val: 5, Found: true}, {Val: 3, Found: true}}},
	} {
		got, err := m.MultiGetCommitted(ctx, tc.committed, []state.Key{a, b})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0] != tc.want[0] || got[1] != tc.want[1] {
			t.Errorf("as of %v: %v, want %v", tc.committed, got, tc.want)
		}
	}
}
