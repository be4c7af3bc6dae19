package cassandra_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/cassandra"
	"github.com/squallstream/squall/state/cassandra/cassandratest"
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
	ctx := state.WithFence(context.Background(), state.Fence{Owner: "bench", Generation: 1})
	table, err := cassandratest.Session(b).EnsureTable(ctx, cassandra.TableSpec{
		Name: cassandratest.Table(b), Layout: cassandra.Opaque,
		Keys: []cassandra.Column{{Name: "k", Type: "text"}}, Values: cassandra.Typed[int64]("bigint"),
	})
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1000, 10000} {
		keys := make([]state.Key, n)
		ups := make([]state.ValueUpdater[int64], n)
		inc := state.ValueUpdaterFunc[int64](func(old int64, _ bool) int64 { return old + 1 })
		for i := range keys {
			keys[i] = state.MustKey(fmt.Sprintf("key-%d-%d", n, i))
			ups[i] = inc
		}
		for _, inFlight := range []int{32, 64, 128, 256} {
			b.Run(fmt.Sprintf("N=%d/inflight=%d", n, inFlight), func(b *testing.B) {
				cfg := cassandratest.Config(b)
				cfg.MaxInFlight = inFlight
				s, err := cassandra.Connect(ctx, cfg)
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				tab, err := s.OpenTable(ctx, table.Spec())
				if err != nil {
					b.Fatal(err)
				}
				bm, err := tab.Open(ctx)
				if err != nil {
					b.Fatal(err)
				}
				// One opaque update writes the rows (and prepares the
				// statements); their stored bytes are what is written
				// below.
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
				vals := make([][]byte, n)
				for i, e := range got {
					if !e.Found {
						b.Fatalf("row %v not written", keys[i])
					}
					vals[i] = e.Val
				}
				batch := func() time.Duration {
					start := time.Now()
					if err := bm.MultiPut(ctx, keys, vals); err != nil {
						b.Fatal(err)
					}
					return time.Since(start)
				}
				batch() // warm up as OpaqueUpdate does
				lat := make([]time.Duration, 0, b.N)
				b.ResetTimer()
				for range b.N {
					lat = append(lat, batch())
				}
				b.StopTimer()
				slices.Sort(lat)
				b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "keys/s")
				b.ReportMetric(float64(lat[(len(lat)*99)/100])/1e6, "batch-p99-ms")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}
