// Package windowstoretest is the conformance suite of windowstore.Store
// implementations.
package windowstoretest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/squallstream/squall/trident/windowstore"
	"github.com/squallstream/squall/txn"
)

// Run runs the suite against stores made by open; each call must return
// a store in which the ids the suite uses (prefixed by the test's name)
// have no records.
func Run(t *testing.T, open func(t *testing.T) windowstore.Store) {
	t.Run("GetPutLast", func(t *testing.T) { testGetPutLast(t, open(t)) })
	t.Run("Prune", func(t *testing.T) { testPrune(t, open(t)) })
	t.Run("IDsAreSeparate", func(t *testing.T) { testIDs(t, open(t)) })
	t.Run("Concurrent", func(t *testing.T) { testConcurrent(t, open(t)) })
	t.Run("CanceledContext", func(t *testing.T) { testCanceled(t, open(t)) })
	t.Run("Remove", func(t *testing.T) { testRemove(t, open(t)) })
}

// testRemove: Remove deletes every record of one id and no other's; an
// id without records removes without error; a removed id takes records
// again.
func testRemove(t *testing.T, s windowstore.Store) {
	ctx := t.Context()
	w, other := id(t, "w/0"), id(t, "w/1")
	put(t, s, w, 3, "three", 0)
	put(t, s, w, 4, "four", 0)
	put(t, s, other, 4, "other", 0)
	if err := s.Remove(ctx, w); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	for _, txid := range []txn.TxID{3, 4} {
		if _, err := s.Get(ctx, w, txid); !errors.Is(err, windowstore.ErrNotFound) {
			t.Errorf("Get(%d) after Remove: %v, want ErrNotFound", txid, err)
		}
	}
	if _, _, err := s.Last(ctx, w, 100); !errors.Is(err, windowstore.ErrNotFound) {
		t.Errorf("Last after Remove: %v, want ErrNotFound", err)
	}
	get(t, s, other, 4, "other")
	if err := s.Remove(ctx, id(t, "never")); err != nil {
		t.Errorf("Remove of an id without records: %v", err)
	}
	put(t, s, w, 5, "five", 0)
	get(t, s, w, 5, "five")
}

func id(t *testing.T, s string) string { return t.Name() + "/" + s }

func testGetPutLast(t *testing.T, s windowstore.Store) {
	ctx := t.Context()
	w := id(t, "w/0")
	if _, err := s.Get(ctx, w, 1); !errors.Is(err, windowstore.ErrNotFound) {
		t.Fatalf("Get of an empty store: %v, want ErrNotFound", err)
	}
	if _, _, err := s.Last(ctx, w, 10); !errors.Is(err, windowstore.ErrNotFound) {
		t.Fatalf("Last of an empty store: %v, want ErrNotFound", err)
	}
	put(t, s, w, 3, "three", 0)
	put(t, s, w, 5, "five", 0)
	put(t, s, w, 5, "five again", 0)
	get(t, s, w, 5, "five again")
	get(t, s, w, 3, "three")
	if _, err := s.Get(ctx, w, 4); !errors.Is(err, windowstore.ErrNotFound) {
		t.Errorf("Get(4): %v, want ErrNotFound", err)
	}
	for before, want := range map[txn.TxID]txn.TxID{4: 3, 5: 3, 6: 5, 100: 5} {
		got, rec, err := s.Last(ctx, w, before)
		if err != nil || got != want {
			t.Errorf("Last(before %d) = %d, %v; want %d", before, got, err, want)
			continue
		}
		wantRec := map[txn.TxID]string{3: "three", 5: "five again"}[want]
		if string(rec) != wantRec {
			t.Errorf("Last(before %d) record %q, want %q", before, rec, wantRec)
		}
	}
	if _, _, err := s.Last(ctx, w, 3); !errors.Is(err, windowstore.ErrNotFound) {
		t.Errorf("Last(before 3): %v, want ErrNotFound", err)
	}
	put(t, s, w, 6, "", 0)
	get(t, s, w, 6, "")
}

func testPrune(t *testing.T, s windowstore.Store) {
	ctx := t.Context()
	w := id(t, "w/0")
	for i := txn.TxID(1); i <= 5; i++ {
		put(t, s, w, i, fmt.Sprint(i), i-1)
	}
	for i := txn.TxID(1); i <= 3; i++ {
		if _, err := s.Get(ctx, w, i); !errors.Is(err, windowstore.ErrNotFound) {
			t.Errorf("txid %d not pruned: %v", i, err)
		}
	}
	get(t, s, w, 4, "4")
	get(t, s, w, 5, "5")
	if got, _, err := s.Last(ctx, w, 5); err != nil || got != 4 {
		t.Errorf("Last(before 5) = %d, %v; want 4", got, err)
	}
}

func testIDs(t *testing.T, s windowstore.Store) {
	a, b := id(t, "a/0"), id(t, "a/1")
	put(t, s, a, 1, "a1", 0)
	put(t, s, b, 2, "b2", 2)
	get(t, s, a, 1, "a1")
	get(t, s, b, 2, "b2")
	if got, _, err := s.Last(t.Context(), b, 5); err != nil || got != 2 {
		t.Errorf("Last of b = %d, %v; want 2", got, err)
	}
}

func testConcurrent(t *testing.T, s windowstore.Store) {
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for p := range 4 {
		wg.Go(func() {
			w := id(t, fmt.Sprintf("w/%d", p))
			for i := txn.TxID(1); i <= 20; i++ {
				if err := s.Put(t.Context(), w, i, []byte(fmt.Sprint(p, i)), i-1); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for p := range 4 {
		get(t, s, id(t, fmt.Sprintf("w/%d", p)), 20, fmt.Sprint(p, 20))
	}
}

func testCanceled(t *testing.T, s windowstore.Store) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	w := id(t, "w/0")
	if err := s.Put(ctx, w, 1, []byte("x"), 0); err == nil {
		t.Error("Put with a canceled context succeeded")
	}
	if _, err := s.Get(ctx, w, 1); err == nil {
		t.Error("Get with a canceled context succeeded")
	}
}

func put(t *testing.T, s windowstore.Store, w string, txid txn.TxID, rec string, prune txn.TxID) {
	t.Helper()
	if err := s.Put(t.Context(), w, txid, []byte(rec), prune); err != nil {
		t.Fatalf("Put(%s, %d): %v", w, txid, err)
	}
}

func get(t *testing.T, s windowstore.Store, w string, txid txn.TxID, want string) {
	t.Helper()
	got, err := s.Get(t.Context(), w, txid)
	if err != nil {
		t.Fatalf("Get(%s, %d): %v", w, txid, err)
	}
	if string(got) != want {
		t.Errorf("Get(%s, %d) = %q, want %q", w, txid, got, want)
	}
}
