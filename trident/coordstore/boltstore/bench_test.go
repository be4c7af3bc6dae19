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

// BenchmarkMetaBatch measures the metadata writes of one batch of an
// opaque spout over three partitions at steady state: each partition's
// entry for the txid, then the clean-up of its earlier entries.
func BenchmarkMetaBatch(b *testing.B) {
	s, err := boltstore.Open(b.Context(), filepath.Join(b.TempDir(), "coord.db"), boltstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	gen, err := s.Acquire(b.Context(), "t")
	if err != nil {
		b.Fatal(err)
	}
	parts := []string{"p0", "p1", "p2"}
	value := []byte("offsets 0123456789")
	var txid txn.TxID
	for b.Loop() {
		txid++
		for _, p := range parts {
			if err := s.PutMeta(b.Context(), gen, coordstore.Key{Owner: "t", Stream: "s", Partition: p}, txid, value); err != nil {
				b.Fatal(err)
			}
		}
		for _, p := range parts {
			if err := s.CleanupMetaBefore(b.Context(), gen, coordstore.Key{Owner: "t", Stream: "s", Partition: p}, txid); err != nil {
				b.Fatal(err)
			}
		}
	}
}
