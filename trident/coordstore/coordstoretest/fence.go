package coordstoretest

import (
	"errors"
	"sync"
	"testing"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/txn"
)

func acquire(t *testing.T, s coordstore.Store, owner string) coordstore.Generation {
	t.Helper()
	gen, err := s.Acquire(ctx(t), owner)
	if err != nil {
		t.Fatalf("Acquire(%q): %v", owner, err)
	}
	return gen
}

func wantGeneration(t *testing.T, s coordstore.Store, owner string, want coordstore.Generation) {
	t.Helper()
	got, err := s.Generation(ctx(t), owner)
	if err != nil || got != want {
		t.Fatalf("Generation(%q) = %v, %v; want %v", owner, got, err, want)
	}
}

// wantFenced fails unless err is a fatal ErrFenced.
func wantFenced(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, coordstore.ErrFenced) || failure.IsRetryable(err) {
		t.Fatalf("%s by a superseded generation = %v, want a fatal ErrFenced", what, err)
	}
}

func testFenceAcquire(t *testing.T, s coordstore.Store) {
	wantGeneration(t, s, "o", 0)
	g1 := acquire(t, s, "o")
	g2 := acquire(t, s, "o")
	if g1 == 0 || g2 <= g1 {
		t.Fatalf("Acquire gave %v then %v, want growing non-zero generations", g1, g2)
	}
	wantGeneration(t, s, "o", g2)
	wantGeneration(t, s, "other", 0)
	if h := acquire(t, s, "other"); h == 0 {
		t.Fatal("Acquire of another owner gave generation 0")
	}
	wantGeneration(t, s, "o", g2)
}

// testFenceWrites: once a newer generation exists, every write of the older
// one is rejected and stores nothing; the newer one writes as before.
func testFenceWrites(t *testing.T, s coordstore.Store) {
	old := acquire(t, s, "o")
	k := coordstore.Key{Owner: "o", Stream: "s", Partition: "p"}
	oldF := coordstore.Fence{Owner: "o", Generation: old}
	v1, err := s.SwapCoordinator(ctx(t), oldF, 0, rec(1))
	must(t, err)
	for tx := 1; tx <= 4; tx++ {
		put(t, s, k, txn.TxID(tx), "old")
	}

	cur := acquire(t, s, "o")
	curF := coordstore.Fence{Owner: "o", Generation: cur}
	_, err = s.SwapCoordinator(ctx(t), oldF, v1, rec(2))
	wantFenced(t, "SwapCoordinator", err)
	wantFenced(t, "PutMeta", s.PutMeta(ctx(t), old, k, 5, []byte("stale")))
	wantFenced(t, "PutMeta over an entry", s.PutMeta(ctx(t), old, k, 4, []byte("stale")))
	wantFenced(t, "RemoveMeta", s.RemoveMeta(ctx(t), old, k, 3))
	wantFenced(t, "CleanupMetaBefore", s.CleanupMetaBefore(ctx(t), old, k, 4))
	// A generation nobody acquired yet is no owner either.
	wantFenced(t, "PutMeta of a future generation", s.PutMeta(ctx(t), cur+1, k, 5, []byte("future")))
	wantRecord(t, s, "o", rec(1), v1)
	wantEntries(t, s, k, 1, 2, 3, 4)
	wantMeta(t, s, k, 4, str("old"))

	// Another owner's keys are not fenced by o's generations.
	other := coordstore.Key{Owner: "p", Stream: "s", Partition: "p"}
	must(t, s.PutMeta(ctx(t), acquire(t, s, "p"), other, 1, []byte("x")))

	v2, err := s.SwapCoordinator(ctx(t), curF, v1, rec(2))
	must(t, err)
	must(t, s.PutMeta(ctx(t), cur, k, 5, []byte("new")))
	must(t, s.RemoveMeta(ctx(t), cur, k, 3))
	must(t, s.CleanupMetaBefore(ctx(t), cur, k, 2))
	wantRecord(t, s, "o", rec(2), v2)
	wantEntries(t, s, k, 2, 4, 5)
	wantMeta(t, s, k, 5, str("new"))
	wantEntries(t, s, other, 1)
}

// testFenceConcurrent: concurrent Acquires all succeed with distinct
// generations, and only the greatest may write afterwards.
func testFenceConcurrent(t *testing.T, s coordstore.Store) {
	const n = 8
	gens := make([]coordstore.Generation, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { gens[i], errs[i] = s.Acquire(ctx(t), "o") })
	}
	wg.Wait()
	seen := map[coordstore.Generation]bool{}
	var newest coordstore.Generation
	for i, gen := range gens {
		must(t, errs[i])
		if seen[gen] {
			t.Fatalf("two Acquires gave generation %v", gen)
		}
		seen[gen] = true
		newest = max(newest, gen)
	}
	wantGeneration(t, s, "o", newest)
	k := coordstore.Key{Owner: "o", Stream: "s", Partition: "p"}
	for gen := range seen {
		err := s.PutMeta(ctx(t), gen, k, 1, []byte(gen.String()))
		if gen == newest {
			must(t, err)
		} else {
			wantFenced(t, "PutMeta", err)
		}
	}
	wantMeta(t, s, k, 1, str(newest.String()))
}

func testReopenFence(t *testing.T, o Opener) {
	s := open(t, o)
	old := acquire(t, s, "o")
	cur := acquire(t, s, "o")
	must(t, s.Close())
	s = open(t, o)
	defer s.Close()
	wantGeneration(t, s, "o", cur)
	k := coordstore.Key{Owner: "o", Stream: "s", Partition: "p"}
	wantFenced(t, "PutMeta after reopening", s.PutMeta(ctx(t), old, k, 1, nil))
	if next := acquire(t, s, "o"); next <= cur {
		t.Fatalf("Acquire after reopening = %v, want more than %v", next, cur)
	}
}
