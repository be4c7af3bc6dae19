package coordstoretest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/txn"
)

// testConcurrentSwap races coordinators on one record: each increments
// Committed with load-then-swap and retries on conflict. Every increment
// must land exactly once.
func testConcurrentSwap(t *testing.T, s coordstore.Store) {
	const workers, increments = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	f := fence(t, s, "race")
	for range workers {
		wg.Go(func() {
			for done := 0; done < increments; {
				r, v, err := s.LoadCoordinator(ctx(t), "race")
				if err != nil {
					errs <- err
					return
				}
				r.Committed++
				r.Attempts = map[txn.TxID]uint32{r.Committed + 1: uint32(done)}
				switch _, err := s.SwapCoordinator(ctx(t), f, v, r); {
				case err == nil:
					done++
				case errors.Is(err, coordstore.ErrConflict):
					// lost the race: load again
				default:
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
	r, _ := load(t, s, "race")
	if r.Committed != workers*increments {
		t.Fatalf("Committed = %d after %d successful swaps", r.Committed, workers*increments)
	}
}

// testConcurrentMeta runs writers, readers and cleanups on shared and
// private keys at once; each writer's private key must end up exact.
func testConcurrentMeta(t *testing.T, s coordstore.Store) {
	const workers, n = 6, 40
	shared := coordstore.Key{Owner: "o", Stream: "s", Partition: "shared"}
	var wg sync.WaitGroup
	errs := make(chan error, 3*workers)
	gen := g(t, s, "o")
	for w := range workers {
		own := coordstore.Key{Owner: "o", Stream: "s", Partition: fmt.Sprint("p", w)}
		wg.Go(func() {
			for i := 1; i <= n; i++ {
				tx := txn.TxID(i)
				v := []byte(fmt.Sprint(w, ":", i))
				if err := s.PutMeta(ctx(t), gen, own, tx, v); err != nil {
					errs <- err
					return
				}
				if err := s.PutMeta(ctx(t), gen, shared, tx, v); err != nil {
					errs <- err
					return
				}
				if i%10 == 0 {
					if err := s.CleanupMetaBefore(ctx(t), gen, own, tx-5); err != nil {
						errs <- err
						return
					}
				}
			}
		})
		wg.Go(func() {
			for i := 1; i <= n; i++ {
				if _, _, err := s.PrevMeta(ctx(t), shared, coordstore.MaxTxID); err != nil {
					errs <- err
					return
				}
				if _, _, err := s.GetMeta(ctx(t), own, txn.TxID(i)); err != nil {
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
	for w := range workers {
		own := coordstore.Key{Owner: "o", Stream: "s", Partition: fmt.Sprint("p", w)}
		var want []txn.TxID
		for i := n - 5; i <= n; i++ {
			want = append(want, txn.TxID(i))
		}
		wantEntries(t, s, own, want...)
		wantMeta(t, s, own, n, str(fmt.Sprint(w, ":", n)))
	}
	var all []txn.TxID
	for i := 1; i <= n; i++ {
		all = append(all, txn.TxID(i))
	}
	wantEntries(t, s, shared, all...)
}
