package coord_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/coordstore/faultstore"
	"github.com/squallstream/squall/trident/internal/coord"
	"github.com/squallstream/squall/txn"
)

func toRecord(st coord.State) coordstore.Record {
	r := coordstore.Record{Committed: st.Committed}
	if len(st.Attempts) > 0 {
		r.Attempts = make(map[txn.TxID]uint32, len(st.Attempts))
		for _, a := range st.Attempts {
			r.Attempts[a.TxID] = a.N
		}
	}
	return r
}

func toState(r coordstore.Record) coord.State {
	st := coord.State{Committed: r.Committed}
	for t, n := range r.Attempts {
		st.Attempts = append(st.Attempts, txn.Attempt{TxID: t, N: n})
	}
	return st // New does not need them sorted
}

// TestShellOverFaultyStore drives a coordinator the way a shell does, over
// a coordination store that fails randomly, before or after its writes. A
// failed Persist is handled as a crash: the shell drops the rest of the
// actions and restarts the coordinator from the record it reloads. The
// stream must keep committing, in order, and never emit one (txid,
// attempt) twice.
func TestShellOverFaultyStore(t *testing.T) {
	ctx := context.Background()
	cfg := coord.Config{MaxBatchesInFlight: 3, BatchTimeout: 20}
	for seed := range uint64(20) {
		mem := coordstore.NewMemory()
		gen, err := mem.Acquire(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		owner := coordstore.Fence{Owner: "s", Generation: gen}
		store := faultstore.Wrap(mem, faultstore.Random(seed, 0.15))
		rng := rand.New(rand.NewPCG(seed, 1))
		ever := map[txn.Attempt]bool{}
		var (
			success  txn.TxID
			c        *coord.Coordinator
			v        coordstore.Version
			restarts int
		)
		restart := func() {
			for {
				r, ver, err := store.LoadCoordinator(ctx, "s")
				if err != nil {
					continue // retryable: try again
				}
				var nerr error
				if c, nerr = coord.New(cfg, toState(r)); nerr != nil {
					t.Fatal(nerr)
				}
				v, success = ver, max(success, r.Committed)
				restarts++
				return
			}
		}
		restart()
		for range 3000 {
			switch k := rng.IntN(10); {
			case k < 2:
				c.Tick()
			case k < 9:
				// Ack the lowest batch in its current phase most of the
				// time, another active one otherwise.
				tx := c.Committed() + 1 + txn.TxID(rng.IntN(2))
				if a, s := c.Status(tx); s == coord.Processing || s == coord.Committing {
					c.Ack(a, s)
				}
			default:
				tx := c.Committed() + 1 + txn.TxID(rng.IntN(3))
				if a, s := c.Status(tx); s == coord.Processing || s == coord.Committing {
					c.Fail(a, s, nil)
				}
			}
			crashed := false
		actions:
			for _, a := range c.Ready() {
				switch a.Kind {
				case coord.Persist:
					nv, err := store.SwapCoordinator(ctx, owner, v, toRecord(a.State))
					if err != nil {
						crashed = true
						break actions
					}
					v = nv
				case coord.EmitBatch:
					if ever[a.Attempt] {
						t.Fatalf("seed %d: %v emitted twice", seed, a.Attempt)
					}
					ever[a.Attempt] = true
				case coord.Success:
					if a.Attempt.TxID != success+1 {
						t.Fatalf("seed %d: success %v after %d", seed, a.Attempt, success)
					}
					success = a.Attempt.TxID
				}
			}
			if crashed {
				restart()
			} else {
				c.Advance()
			}
		}
		if success < 100 || restarts < 10 {
			t.Fatalf("seed %d: only %d commits and %d restarts", seed, success, restarts)
		}
	}
}
