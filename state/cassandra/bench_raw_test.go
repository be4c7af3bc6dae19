package cassandra_test

import (
	"context"
	"testing"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/cassandra"
	"github.com/squallstream/squall/state/opaque"
	"github.com/squallstream/squall/txn"
)

// BenchmarkCassandraRawWrite is BenchmarkCassandraOpaqueUpdate's floor:
// the same rows (an opaque table of the same spec, the same keys, the
// values one opaque update wrote) written again and again with the
// backing map's MultiPut alone, N single-partition writes a batch and no
// read. Its sub-benchmarks are OpaqueUpdate's; keys/s of the two in one
// `go test` run give the opaque/raw ratio (an opaque update reads before
// it writes, so about 0.5 is its goal).
func BenchmarkCassandraRawWrite(b *testing.B) {
	benchKeyBatches(b, func(b *testing.B, ctx context.Context, bm *cassandra.Map, keys []state.Key, ups []state.ValueUpdater[int64]) func() {
		// One opaque update writes the rows (and prepares the statements);
		// their stored bytes are what every batch writes again.
		m := opaque.New[int64](bm, state.MapOptions[int64]{})
		if err := m.BeginCommit(ctx, txn.TxID(1)); err != nil {
			b.Fatal(err)
		}
		if _, err := m.MultiUpdate(ctx, keys, ups); err != nil {
			b.Fatal(err)
		}
		if err := m.Commit(ctx, txn.TxID(1)); err != nil {
			b.Fatal(err)
		}
		got, err := bm.MultiGet(ctx, keys)
		if err != nil {
			b.Fatal(err)
		}
		vals := make([][]byte, len(keys))
		for i, e := range got {
			if !e.Found {
				b.Fatalf("row %v not written", keys[i])
			}
			vals[i] = e.Val
		}
		return func() {
			if err := bm.MultiPut(ctx, keys, vals); err != nil {
				b.Fatal(err)
			}
		}
	})
}
