package spout_test

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/trident/coordstore/faultstore"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/trident/spout/spouttest"
)

// faultRun plays four batches with two tasks over a store failing as inj
// says, replaying each failed batch as the batch coordinator would, and
// returns what each txid committed and what a fifth, fault-free batch
// emits. Every error must be a retryable injected fault.
func faultRun(t *testing.T, kind spout.Kind, inj faultstore.Injector) (committed [][]rec, calls int) {
	t.Helper()
	src := spouttest.NewSource("a", "b", "c")
	src.SetMaxBatch(2)
	var off atomic.Bool
	fs := faultstore.Wrap(ownedStore(), faultstore.InjectorFunc(func(op faultstore.Op) faultstore.Fault {
		if off.Load() {
			return faultstore.Fault{}
		}
		return inj.Inject(op)
	}))
	r := newRig(t, kind, fs, src, 2)
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, faultstore.ErrInjected) || !failure.IsRetryable(err) {
			t.Fatalf("%s: %v (%s), want a retryable injected fault", what, err, failure.KindOf(err))
		}
	}
	n := uint32(0)
	var lastErr error
	for txid := 1; txid <= 4; txid++ {
		for _, p := range []spout.Partition{"a", "b", "c"} {
			fill(src, p, txid%3)
		}
		for tries := 0; ; tries++ {
			a := at(tx(txid), n)
			n++
			if tries == 100 {
				t.Fatalf("no progress: %v", lastErr)
			}
			got, _, err := r.tryEmit(a)
			lastErr = err
			if err != nil {
				check("emit "+a.String(), err)
				continue
			}
			if err := r.tryBeginCommit(a); err != nil {
				lastErr = err
				check("begin commit "+a.String(), err)
				continue
			}
			committed = append(committed, sortRecs(got))
			if err := r.trySuccess(a.TxID); err != nil {
				check("success "+a.String(), err)
			}
			break
		}
	}
	calls = fs.Calls()
	off.Store(true)
	committed = append(committed, sortRecs(r.emit(at(5, n))))
	return committed, calls
}

// Every single store failure, before or after the write takes effect,
// surfaces as a retryable error, and the replays commit exactly what a
// run without failures commits.
func TestStoreFaults(t *testing.T) {
	none := faultstore.InjectorFunc(func(faultstore.Op) faultstore.Fault { return faultstore.Fault{} })
	forKinds(t, func(t *testing.T, kind spout.Kind) {
		want, calls := faultRun(t, kind, none)
		if len(slices.Concat(want...)) == 0 {
			t.Fatal("the run emits nothing")
		}
		for i := 1; i <= calls; i++ {
			for _, inj := range []struct {
				name string
				inj  faultstore.Injector
			}{{"before", faultstore.FailNth(i)}, {"after", faultstore.FailAfterWrite(i)}} {
				got, _ := faultRun(t, kind, inj.inj)
				for j := range want {
					if !slices.Equal(got[j], want[j]) {
						t.Fatalf("fault %s call %d: batch %d = %s, want %s", inj.name, i, j+1, fmtRecs(got[j]), fmtRecs(want[j]))
					}
				}
			}
		}
	})
}

// Many random store failures: still retryable, still the same commits.
func TestRandomStoreFaults(t *testing.T) {
	none := faultstore.InjectorFunc(func(faultstore.Op) faultstore.Fault { return faultstore.Fault{} })
	forKinds(t, func(t *testing.T, kind spout.Kind) {
		want, _ := faultRun(t, kind, none)
		for seed := range uint64(40) {
			got, _ := faultRun(t, kind, faultstore.Random(seed, 0.2))
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("seed %d: committed %v, want %v", seed, got, want)
			}
		}
	})
}

// The allocator froze an opaque batch but an executor's BeginCommit
// failed before storing: no state was written, so the replay may emit the
// unfrozen partitions anew, and with an unchanged source it emits the same.
func TestPartialFreeze(t *testing.T) {
	src := spouttest.NewSource("a", "b")
	fill(src, "a", 2)
	fill(src, "b", 2)
	// Calls: Begin reads the allocator entry (1), the executors read
	// the stores' positions (2, 3); BeginCommit writes the allocator's
	// set (4), then task 0's a (5) and task 1's b (6).
	fs := faultstore.Wrap(ownedStore(), faultstore.FailNth(6))
	r := newRig(t, spout.Opaque, fs, src, 2)
	first := r.emit(at(1, 0))
	if err := r.tryBeginCommit(at(1, 0)); !errors.Is(err, faultstore.ErrInjected) {
		t.Fatalf("BeginCommit = %v, want the injected fault on b", err)
	}
	wantEntries(t, r.store, "a", "1="+meta(0, 2))
	wantEntries(t, r.store, "b")
	got, b, err := r.tryEmit(at(1, 1))
	if err != nil || !b.Frozen {
		t.Fatalf("replay: frozen %v, %v", b.Frozen, err)
	}
	wantRecs(t, "replay", got, first)
	r.commit(at(1, 1))
	wantEntries(t, r.store, "b", "1="+meta(0, 2))
}
