package boltstore_test

import (
	"path/filepath"
	"testing"

	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/coordstore/boltstore"
	"github.com/squallstream/squall/txn"
)

// BenchmarkSwapCoordinator measures one durable Persist of a coordinator
// with 8 batches in flight: a compare-and-set and an fsync.
func BenchmarkSwapCoordinator(b *testing.B) {
	s, err := boltstore.Open(b.Context(), filepath.Join(b.TempDir(), "coord.db"), boltstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	gen, err := s.Acquire(b.Context(), "s")
	if err != nil {
		b.Fatal(err)
	}
	f := coordstore.Fence{Owner: "s", Generation: gen}
	var v coordstore.Version
	r := coordstore.Record{Attempts: map[txn.TxID]uint32{}}
	for b.Loop() {
		r.Committed++
		clear(r.Attempts)
		for i := range 8 {
			r.Attempts[r.Committed+1+txn.TxID(i)] = 0
		}
		if v, err = s.SwapCoordinator(b.Context(), f, v, r); err != nil {
			b.Fatal(err)
		}
	}
}
