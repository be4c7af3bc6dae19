package faultstore_test

import (
	"errors"
	"testing"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/coordstore/coordstoretest"
	"github.com/squallstream/squall/trident/coordstore/faultstore"
	"github.com/squallstream/squall/txn"
)

// Without faults the wrapper is a conforming store.
func TestConformance(t *testing.T) {
	none := faultstore.InjectorFunc(func(faultstore.Op) faultstore.Fault { return faultstore.Fault{} })
	coordstoretest.Run(t, coordstoretest.Factory{
		New: func(t *testing.T) coordstoretest.Opener {
			return func() (coordstore.Store, error) { return faultstore.Wrap(coordstore.NewMemory(), none), nil }
		},
	})
}

var key = coordstore.Key{Owner: "s", Stream: "s", Partition: "p"}

func injected(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, faultstore.ErrInjected) || !failure.IsRetryable(err) {
		t.Fatalf("got %v, want a retryable injected fault", err)
	}
}

func TestFailNth(t *testing.T) {
	inner := owned(t)
	s := faultstore.Wrap(inner, faultstore.FailNth(2))
	if err := s.PutMeta(t.Context(), 1, key, 1, []byte("a")); err != nil {
		t.Fatal(err)
	}
	injected(t, s.PutMeta(t.Context(), 1, key, 2, []byte("b")))
	if _, ok, _ := inner.GetMeta(t.Context(), key, 2); ok {
		t.Fatal("a call failed before the store must not reach it")
	}
	if _, ok, err := s.GetMeta(t.Context(), key, 1); err != nil || !ok {
		t.Fatalf("third call: %v %v", ok, err)
	}
	if s.Calls() != 3 {
		t.Fatalf("Calls = %d", s.Calls())
	}
}

func TestFailAfterWrite(t *testing.T) {
	inner := owned(t)
	s := faultstore.Wrap(inner, faultstore.FailAfterWrite(2))
	if _, err := s.SwapCoordinator(t.Context(), coordstore.Fence{Owner: "s", Generation: 1}, 0, coordstore.Record{Committed: 1}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.LoadCoordinator(t.Context(), "s"); err != nil { // a read: not counted as a write
		t.Fatal(err)
	}
	_, err := s.SwapCoordinator(t.Context(), coordstore.Fence{Owner: "s", Generation: 1}, 1, coordstore.Record{Committed: 2})
	injected(t, err)
	// The write happened: the caller learns it by reloading.
	r, v, err := s.LoadCoordinator(t.Context(), "s")
	if err != nil || r.Committed != 2 || v != 2 {
		t.Fatalf("after a fault after the write: %+v v%d %v", r, v, err)
	}
}

func TestRandomIsReproducible(t *testing.T) {
	run := func() []bool {
		s := faultstore.Wrap(owned(t), faultstore.Random(42, 0.3))
		var out []bool
		for i := range 200 {
			err := s.PutMeta(t.Context(), 1, key, txn.TxID(i+1), nil)
			out = append(out, err != nil)
		}
		return out
	}
	a, b := run(), run()
	failed := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("call %d differs between runs with one seed", i)
		}
		if a[i] {
			failed++
		}
	}
	if failed < 30 || failed > 90 {
		t.Fatalf("%d of 200 calls failed with p=0.3", failed)
	}
}

// owned returns a memory store in which generation 1 of owner "s" is
// current.
func owned(t *testing.T) *coordstore.Memory {
	t.Helper()
	m := coordstore.NewMemory()
	if _, err := m.Acquire(t.Context(), "s"); err != nil {
		t.Fatal(err)
	}
	return m
}
