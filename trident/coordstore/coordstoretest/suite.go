// Package coordstoretest is the conformance suite every coordstore.Store
// implementation runs, in the manner of testing/fstest:
//
//	func TestConformance(t *testing.T) {
//		coordstoretest.Run(t, coordstoretest.Factory{
//			New: func(t *testing.T) coordstoretest.Opener {
//				dir := t.TempDir()
//				return func() (coordstore.Store, error) { return open(dir) }
//			},
//			Durable: true,
//		})
//	}
//
// It checks the package coordstore ordering contract: compare-and-set on
// coordinator records, metadata reads, writes and cleanup, Storm's
// rotating-state semantics, copying of values, invalid arguments, context
// cancellation, closing, concurrent use and, for durable stores, that
// everything survives closing and reopening.
package coordstoretest

import (
	"context"
	"testing"

	"github.com/squallstream/squall/trident/coordstore"
)

// Opener opens a store over one location. Every call opens the same
// location; the suite closes a store before opening the location again.
type Opener func() (coordstore.Store, error)

// Factory creates locations for the suite.
type Factory struct {
	// New returns an Opener for a new, empty location (a temporary
	// directory, a fresh keyspace). It may register cleanups with t.
	New func(t *testing.T) Opener
	// Durable says that a location keeps what a closed store held, so the
	// next Open sees it. The reopen tests run only for durable stores.
	Durable bool
}

// Run runs the whole suite as subtests of t.
func Run(t *testing.T, f Factory) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s coordstore.Store)
	}{
		{"CoordinatorEmpty", testCoordinatorEmpty},
		{"CoordinatorSwap", testCoordinatorSwap},
		{"CoordinatorStreams", testCoordinatorStreams},
		{"CoordinatorCopies", testCoordinatorCopies},
		{"CoordinatorExtremes", testCoordinatorExtremes},
		{"CoordinatorFailures", testCoordinatorFailures},
		{"MetaGetPut", testMetaGetPut},
		{"MetaEmptyValues", testMetaEmptyValues},
		{"MetaPrev", testMetaPrev},
		{"MetaRemove", testMetaRemove},
		{"MetaCleanup", testMetaCleanup},
		{"MetaKeys", testMetaKeys},
		{"MetaCopies", testMetaCopies},
		{"Rotating", testRotating},
		{"Invalid", testInvalid},
		{"Canceled", testCanceled},
		{"ConcurrentSwap", testConcurrentSwap},
		{"ConcurrentMeta", testConcurrentMeta},
		{"FenceAcquire", testFenceAcquire},
		{"FenceWrites", testFenceWrites},
		{"FenceConcurrent", testFenceConcurrent},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t, f.New(t))
			defer s.Close()
			tc.fn(t, s)
		})
	}
	t.Run("Close", func(t *testing.T) { testClose(t, open(t, f.New(t))) })
	if f.Durable {
		t.Run("Reopen", func(t *testing.T) { testReopen(t, f.New(t)) })
		t.Run("ReopenCleanup", func(t *testing.T) { testReopenCleanup(t, f.New(t)) })
		t.Run("ReopenFence", func(t *testing.T) { testReopenFence(t, f.New(t)) })
	}
}

func open(t *testing.T, o Opener) coordstore.Store {
	t.Helper()
	s, err := o()
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return s
}

// ctx returns a context canceled when the test ends.
func ctx(t *testing.T) context.Context { return t.Context() }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// g returns owner's newest generation, acquiring the first one if there is
// none: the tests that are not about fencing write as the current owner.
func g(t *testing.T, s coordstore.Store, owner string) coordstore.Generation {
	t.Helper()
	gen, err := s.Generation(ctx(t), owner)
	if err == nil && gen == 0 {
		gen, err = s.Acquire(ctx(t), owner)
	}
	if err != nil {
		t.Fatalf("generation of %q: %v", owner, err)
	}
	return gen
}

// fence returns the fence of owner's current generation (see g).
func fence(t *testing.T, s coordstore.Store, owner string) coordstore.Fence {
	t.Helper()
	return coordstore.Fence{Owner: owner, Generation: g(t, s, owner)}
}
