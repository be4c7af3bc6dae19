package etcdstore_test

import (
	"testing"

	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/coordstore/etcdstore"
	"github.com/squallstream/squall/txn"
)

// BenchmarkEtcdStoreSwapCoordinator measures the two writes of a batch's
// life on an in-process single-node etcd (its WAL fsync'd on every
// write): SwapCoordinator, one Persist of a coordinator with 8 batches in
// flight (a transaction comparing the generation and the version), and
// PutMeta, one partition's metadata of one batch (a transaction comparing
// the generation).
func BenchmarkEtcdStoreSwapCoordinator(b *testing.B) {
	cli := client(b, embedded(b))
	s, err := etcdstore.New(cli, newPrefix(b, nil), etcdstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	gen, err := s.Acquire(b.Context(), "s")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("SwapCoordinator", func(b *testing.B) {
		f := coordstore.Fence{Owner: "s", Generation: gen}
		_, v, err := s.LoadCoordinator(b.Context(), "s")
		if err != nil {
			b.Fatal(err)
		}
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
	})
	b.Run("PutMeta", func(b *testing.B) {
		k := coordstore.Key{Owner: "s", Stream: "counts", Partition: "events@0"}
		value := []byte(`{"offset":123456789,"next":123457789}`)
		tx := txn.TxID(0)
		for b.Loop() {
			tx++
			if err := s.PutMeta(b.Context(), gen, k, tx, value); err != nil {
				b.Fatal(err)
			}
		}
	})
}
