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

// BenchmarkCassandraOpaqueUpdate runs batches of N distinct keys through
// the opaque map on a Cassandra table (key text, opaque bigint counts):
// each batch is BeginCommit, one MultiUpdate adding 1 to every key (N
// single-partition reads, then N single-partition writes) and Commit, the
// work of a persistent aggregation's commit. Every batch after the first
// finds all its keys. Reported: keys/s (key updates per second) and
// batch-p99-ms, for several in-flight limits.
func BenchmarkCassandraOpaqueUpdate(b *testing.B) {
	benchOpaqueUpdates(b, func(_ *testing.B, bm *cassandra.Map, _ int) state.BackingMap[[]byte] { return bm })
}

// BenchmarkCassandraOpaqueUpdateCached is BenchmarkCassandraOpaqueUpdate
// with a state.LRU of N entries between the opaque map and the table, as
// a persistent aggregation whose keys repeat across batches runs it (the
// map of a partition is its keys' only writer): after the untimed first
// batch every key is cached, so an update is the write alone, and its
// keys/s against BenchmarkCassandraRawWrite's is what the opaque layer
// costs beyond the writes it must make.
func BenchmarkCassandraOpaqueUpdateCached(b *testing.B) {
	benchOpaqueUpdates(b, func(b *testing.B, bm *cassandra.Map, keys int) state.BackingMap[[]byte] {
		cached, err := state.NewLRU[[]byte](bm, keys)
		if err != nil {
			b.Fatal(err)
		}
		return cached
	})
}

// benchOpaqueUpdates runs benchKeyBatches with batches of opaque updates
// (BeginCommit, MultiUpdate, Commit) over the map wrap returns for the
// table's backing map and the batch's number of keys.
func benchOpaqueUpdates(b *testing.B, wrap func(b *testing.B, bm *cassandra.Map, keys int) state.BackingMap[[]byte]) {
	var txid txn.TxID // grows across sub-benchmarks, which share keys
	benchKeyBatches(b, func(b *testing.B, ctx context.Context, bm *cassandra.Map, keys []state.Key, ups []state.ValueUpdater[int64]) func() {
		m := opaque.New[int64](wrap(b, bm, len(keys)), state.MapOptions[int64]{})
		return func() {
			txid++
			if err := m.BeginCommit(ctx, txid); err != nil {
				b.Fatal(err)
			}
			if _, err := m.MultiUpdate(ctx, keys, ups); err != nil {
				b.Fatal(err)
			}
			if err := m.Commit(ctx, txid); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// benchKeyBatches runs batches over one opaque bigint table, for 1,000
// and 10,000 keys and several in-flight limits, each sub-benchmark on a
// connection of its own: newBatch gets the table's backing map and the
// keys, each with an updater adding 1, and returns one batch's work. The
// first batch warms up (prepares statements, creates rows) untimed.
// Reported: keys/s and batch-p99-ms.
func benchKeyBatches(b *testing.B, newBatch func(b *testing.B, ctx context.Context, bm *cassandra.Map, keys []state.Key, ups []state.ValueUpdater[int64]) func()) {
	ctx := state.WithFence(context.Background(), state.Fence{Owner: "bench", Generation: 1}) // as the runtime opens and writes state
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
				work := newBatch(b, ctx, bm, keys, ups)
				batch := func() time.Duration {
					start := time.Now()
					work()
					return time.Since(start)
				}
				batch()
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
