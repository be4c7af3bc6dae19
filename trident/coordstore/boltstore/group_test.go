package boltstore

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"

	bolt "go.etcd.io/bbolt"

	"github.com/squallstream/squall/trident/coordstore"
)

// txID returns the id of the last committed write transaction.
func txID(t *testing.T, s *Store) int {
	t.Helper()
	var id int
	if err := s.db.View(func(tx *bolt.Tx) error { id = tx.ID(); return nil }); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestWritesQueuedDuringACommitCommitTogether holds one commit open while
// ten metadata writes arrive, one of them by a superseded generation: the
// nine others must commit in one transaction, the superseded one must
// fail alone with ErrFenced, and every write must be readable afterwards.
func TestWritesQueuedDuringACommitCommitTogether(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, err := Open(ctx, filepath.Join(t.TempDir(), "coord.db"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		old, err := s.Acquire(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		gen, err := s.Acquire(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		before := txID(t, s)

		release := make(chan struct{})
		held := make(chan error, 1)
		go func() {
			held <- s.update(ctx, "held", func(*bolt.Tx) error { <-release; return nil })
		}()
		synctest.Wait() // the held write leads, inside its transaction

		key := func(i int) coordstore.Key {
			return coordstore.Key{Owner: "t", Stream: "s", Partition: fmt.Sprintf("p%d", i)}
		}
		errs := make([]error, 10)
		var wg sync.WaitGroup
		for i := range errs {
			g := gen
			if i == 4 {
				g = old
			}
			wg.Go(func() { errs[i] = s.PutMeta(ctx, g, key(i), 1, []byte{byte(i)}) })
		}
		synctest.Wait()
		s.gmu.Lock()
		queued := len(s.group.queue)
		s.gmu.Unlock()
		if queued != len(errs) {
			t.Fatalf("%d writes queued behind the open commit, want %d", queued, len(errs))
		}
		close(release)
		wg.Wait()
		if err := <-held; err != nil {
			t.Fatal(err)
		}

		for i, err := range errs {
			if i == 4 {
				if !errors.Is(err, coordstore.ErrFenced) {
					t.Fatalf("write of the superseded generation: %v, want ErrFenced", err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("write %d: %v", i, err)
			}
			v, ok, err := s.GetMeta(ctx, key(i), 1)
			if err != nil || !ok || len(v) != 1 || v[0] != byte(i) {
				t.Fatalf("entry %d: %v %v %v", i, v, ok, err)
			}
		}
		if _, ok, err := s.GetMeta(ctx, key(4), 1); ok || err != nil {
			t.Fatalf("the superseded write is stored (%v, %v)", ok, err)
		}
		// The held commit, then the nine others together (the failed group
		// and the superseded write alone were rolled back).
		if got := txID(t, s) - before; got != 2 {
			t.Fatalf("%d write transactions committed, want 2", got)
		}
	})
}
