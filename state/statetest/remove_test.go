package statetest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/nontransactional"
	"github.com/squallstream/squall/state/opaque"
	"github.com/squallstream/squall/state/statetest"
	"github.com/squallstream/squall/txn"
)

// plainMap hides the MultiDelete of the map it wraps: a backing map that
// cannot delete.
type plainMap struct{ state.BackingMap[[]byte] }

// TestRemoveWithoutDelete runs the removal tables over backing maps that
// cannot delete, directly and under the wrappers that forward
// state.ErrNoDelete: tombstones stay, and read as absent.
func TestRemoveWithoutDelete(t *testing.T) {
	for name, wrap := range map[string]func(state.BackingMap[[]byte]) state.BackingMap[[]byte]{
		"plain": func(m state.BackingMap[[]byte]) state.BackingMap[[]byte] { return m },
		"lru": func(m state.BackingMap[[]byte]) state.BackingMap[[]byte] {
			l, err := state.NewLRU(m, 2)
			if err != nil {
				t.Fatal(err)
			}
			return l
		},
		"fault": func(m state.BackingMap[[]byte]) state.BackingMap[[]byte] {
			return statetest.NewFaultMap(m, nil)
		},
	} {
		t.Run(name, func(t *testing.T) {
			for table, run := range map[string]func(*testing.T, state.BackingMap[[]byte]){
				"opaque":           statetest.TestOpaqueRemoveTable,
				"transactional":    statetest.TestTransactionalRemoveTable,
				"nontransactional": statetest.TestNonTransactionalRemoveTable,
			} {
				t.Run(table, func(t *testing.T) {
					mem := state.NewMemory("")
					run(t, wrap(plainMap{mem}))
					if mem.Len() == 0 {
						t.Errorf("no tombstone stored")
					}
				})
			}
		})
	}
}

// TestNonTransactionalRemoveStoresTombstone: over a map that cannot
// delete, a removal stores the plain tombstone [0x39].
func TestNonTransactionalRemoveStoresTombstone(t *testing.T) {
	ctx := context.Background()
	mem := state.NewMemory("")
	m := nontransactional.New(plainMap{mem}, state.MapOptions[int64]{})
	a := []state.Key{state.MustKey("a")}
	if err := m.MultiPut(ctx, a, []int64{1}); err != nil {
		t.Fatal(err)
	}
	if err := m.MultiRemove(ctx, a); err != nil {
		t.Fatal(err)
	}
	es, _ := mem.MultiGet(ctx, a)
	if !es[0].Found || string(es[0].Val) != "\x91\x39" {
		t.Errorf("stored after the removal: %+v, want the plain tombstone 91 39", es[0])
	}
}

// TestFailedReclaimIsRetried: a delete of tombstones that fails fails
// BeginCommit of the later txid with the store's classification, and the
// next attempt deletes them.
func TestFailedReclaimIsRetried(t *testing.T) {
	ctx := context.Background()
	mem := state.NewMemory("")
	fm := statetest.NewFaultMap[[]byte](mem, nil)
	m := opaque.New(fm, state.MapOptions[int64]{})
	a := []state.Key{state.MustKey("a")}
	step := func(tx txn.TxID, f func() error) {
		t.Helper()
		if err := m.BeginCommit(ctx, tx); err != nil {
			t.Fatal(err)
		}
		if err := f(); err != nil {
			t.Fatal(err)
		}
		if err := m.Commit(ctx, tx); err != nil {
			t.Fatal(err)
		}
	}
	step(1, func() error { return m.MultiPut(ctx, a, []int64{1}) })
	step(2, func() error { return m.MultiRemove(ctx, a) })
	fm.FailNext(statetest.OpDelete, statetest.Retryable(0))
	if err := m.BeginCommit(ctx, 3); !errors.Is(err, statetest.ErrInjected) || !failure.IsRetryable(err) {
		t.Fatalf("BeginCommit(3) with a failing delete: %v, want the retryable injected fault", err)
	}
	if mem.Len() != 1 {
		t.Fatalf("after the failed delete: %d keys stored, want the tombstone", mem.Len())
	}
	if err := m.BeginCommit(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if mem.Len() != 0 || fm.Calls(statetest.OpDelete) != 2 {
		t.Errorf("after BeginCommit(3) again: %d keys stored, %d deletes; want 0 and 2", mem.Len(), fm.Calls(statetest.OpDelete))
	}
}
