package kafka_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/spouts/kafka"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/bolt"
	"github.com/squallstream/squall/state/opaque"
	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/coordstore/boltstore"
	"github.com/squallstream/squall/txn"
)

// The end-to-end tests count records per key: Kafka -> spout -> chaos
// filter -> groupBy(key) -> persistentAggregate(count) on opaque state.

// pipelineParams describe one pipeline run.
type pipelineParams struct {
	Brokers       []string
	Topic         string
	DeadLetters   string // the topic of the records keyDecoder rejects
	Dir           string // durable state and coordination store here; empty: memory
	Keys          int
	Transactional bool
	SpoutTasks    int
	MaxRecords    int

	// Chaos: each tuple the filter sees fails its batch (retryable) with
	// probability 1/FailEvery (a seeded draw: a failure at a fixed count
	// can land in the same batch on every replay, since a failed attempt
	// stops counting where it failed), and the n-th tuple (counted per
	// process) crashes the worker if n%PanicEvery == PanicEvery/2, at most
	// MaxPanics times.
	FailEvery, PanicEvery int64
	MaxPanics             int64
}

const countPartitions = 2

// pipeline is one running pipeline.
type pipeline struct {
	p       pipelineParams
	sp      *kafka.Spout
	store   coordstore.Store
	maps    []state.BackingMap[[]byte]
	closers []func() error
	cluster *topology.LocalCluster
	running *trident.Running
	seen    atomic.Int64
	rngMu   sync.Mutex
	rng     *rand.Rand   // the failure draws
	panics  atomic.Int64 // worker crashes caused
	failed  atomic.Int64 // batches failed
	// crashTickets counts the crash opportunities, of which the first
	// MaxPanics crash.
	crashTickets atomic.Int64
}

type countAgg struct{}

func (countAgg) Init(trident.Tuple) (int64, error) { return 1, nil }
func (countAgg) Combine(a, b int64) int64          { return a + b }
func (countAgg) Zero() int64                       { return 0 }

// keyDecoder reads the key as a string and rejects the values that end in
// "bad".
var keyDecoder = kafka.DecoderFunc(trident.Fields{"key"}, func(r kafka.Record) ([]any, error) {
	if bytes.HasSuffix(r.Value, []byte("bad")) {
		return nil, errors.New("malformed value")
	}
	return []any{string(r.Key)}, nil
})

var errChaos = errors.New("chaos: injected failure")

func startPipeline(t testing.TB, p pipelineParams) *pipeline {
	t.Helper()
	ctx := context.Background()
	pl := &pipeline{p: p, cluster: topology.NewLocalCluster(), rng: rand.New(rand.NewPCG(uint64(p.FailEvery), 1))}
	cfg := kafka.Config{
		Brokers: p.Brokers, Topics: []string{p.Topic}, Topology: "count-" + p.Topic,
		MaxRecordsPerPartition: p.MaxRecords, RefreshInterval: 500 * time.Millisecond,
		RequestTimeout: 5 * time.Second, Logger: testLogger(t),
	}
	cfg.Decoder, cfg.DeadLetterTopic = keyDecoder, p.DeadLetters
	var err error
	if pl.sp, err = kafka.New(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	pl.closers = append(pl.closers, pl.sp.Close)
	var factory trident.StateFactory[int64]
	if p.Dir == "" {
		pl.store = coordstore.NewMemory()
		for range countPartitions {
			pl.maps = append(pl.maps, state.NewMemory(fmt.Sprintf("counts-%d", len(pl.maps))))
		}
	} else {
		st, err := boltstore.Open(ctx, filepath.Join(p.Dir, "coord.db"), boltstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		pl.store = st
		pl.closers = append(pl.closers, st.Close)
		for i := range countPartitions {
			m, err := bolt.Open(filepath.Join(p.Dir, fmt.Sprintf("counts-%d.db", i)), bolt.Options{})
			if err != nil {
				t.Fatal(err)
			}
			pl.maps = append(pl.maps, m)
			pl.closers = append(pl.closers, m.Close)
		}
	}
	factory = trident.Opaque[int64]("counts", func(_ context.Context, partition, _ int) (state.BackingMap[[]byte], error) {
		return pl.maps[partition], nil
	})
	src := pl.sp.Opaque()
	if p.Transactional {
		src = pl.sp.Transactional()
	}
	tt := trident.NewTopology("count")
	s := tt.NewStream("events", src.Parallelism(max(p.SpoutTasks, 1)))
	s = s.Filter(trident.FilterFunc(pl.chaos))
	trident.PersistentAggregate(s.GroupBy("key").Parallelism(countPartitions), factory, trident.Fields{"key"}, countAgg{}, "count")
	tc := trident.Config{}
	tc.Store = pl.store
	tc.BatchEmitInterval = time.Millisecond
	tc.MaxBatchesInFlight = 2
	// Failures are injected every few thousand tuples, so most attempts at
	// a 2,000-record batch fail: replays must not back off for long.
	tc.RetryBackoff, tc.MaxRetryBackoff = 5*time.Millisecond, 100*time.Millisecond
	tc.Topology.MessageTimeout = 20 * time.Second
	tc.Topology.RestartMinBackoff = 10 * time.Millisecond
	tc.Cluster = pl.cluster
	if pl.running, err = tt.Submit(context.Background(), tc); err != nil {
		t.Fatal(err)
	}
	return pl
}

func (pl *pipeline) chaos(_ context.Context, _ trident.Tuple) (bool, error) {
	n := pl.seen.Add(1)
	if e := pl.p.PanicEvery; e > 0 && n%e == e/2 && pl.crashTickets.Add(1) <= pl.p.MaxPanics {
		pl.panics.Add(1)
		panic(fmt.Sprintf("chaos: worker crash at tuple %d", n))
	}
	if e := pl.p.FailEvery; e > 0 && pl.draw(e) {
		pl.failed.Add(1)
		return false, failure.Retryable(errChaos)
	}
	return true, nil
}

// draw reports true with probability 1/e.
func (pl *pipeline) draw(e int64) bool {
	pl.rngMu.Lock()
	defer pl.rngMu.Unlock()
	return pl.rng.Int64N(e) == 0
}

// counts reads the committed count of every key k0..k<Keys-1>.
func (pl *pipeline) counts(ctx context.Context) (map[string]int64, error) {
	keys := make([]state.Key, pl.p.Keys)
	for i := range keys {
		keys[i] = state.MustKey(keyName(i))
	}
	out := map[string]int64{}
	for _, m := range pl.maps {
		entries, err := opaque.New[int64](m, state.MapOptions[int64]{}).MultiGet(ctx, keys)
		if err != nil {
			return nil, err
		}
		for i, e := range entries {
			if e.Val != 0 {
				out[keyName(i)] += e.Val
			}
		}
	}
	return out, nil
}

func (pl *pipeline) total(ctx context.Context) (int64, error) {
	c, err := pl.counts(ctx)
	var n int64
	for _, v := range c {
		n += v
	}
	return n, err
}

// waitTotal waits until the counts add up to want, then for two more
// commits (so that an over-count would show), and returns the counts.
func (pl *pipeline) waitTotal(t testing.TB, ctx context.Context, want int64) map[string]int64 {
	t.Helper()
	// An under-count shows as counts that stop short of want while every
	// partition has been read to its end: fail then instead of at the
	// deadline. "Then" is five batches and 3s (a new partition takes up to
	// RefreshInterval, 500ms here, to be listed).
	var stuckAt txn.TxID
	var stuckN int64 = -1
	var stuckSince time.Time
	for {
		n, err := pl.total(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n >= want {
			break
		}
		switch caughtUp := pl.caughtUp(); {
		case !caughtUp || n != stuckN:
			stuckAt, stuckN, stuckSince = pl.running.Committed(), n, time.Now()
		case pl.running.Committed() >= stuckAt+5 && time.Since(stuckSince) > 3*time.Second:
			t.Fatalf("counted %d of %d records, and every partition was read to its end five batches and %v ago (stats %+v)",
				n, want, time.Since(stuckSince).Round(time.Millisecond), pl.sp.Stats())
		}
		if err := pl.running.Err(); err != nil {
			t.Fatalf("topology halted at %d of %d records: %v", n, want, err)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("counted %d of %d records (committed txid %v, stats %+v, errors %v)", n, want, pl.running.Committed(),
				pl.sp.Stats(), pl.running.Errors())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := pl.running.WaitCommitted(ctx, pl.running.Committed()+2); err != nil {
		t.Fatal(err)
	}
	c, err := pl.counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// caughtUp reports whether every partition's last batch reached the log
// end.
func (pl *pipeline) caughtUp() bool {
	st := pl.sp.Stats()
	for _, p := range st.Partitions {
		if p.Lag != 0 {
			return false
		}
	}
	return len(st.Partitions) > 0
}

// stop shuts the topology down and closes what it opened.
func (pl *pipeline) stop(t testing.TB) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := pl.cluster.Shutdown(ctx); err != nil {
		t.Errorf("shutdown: %v", err)
	}
	for i := len(pl.closers) - 1; i >= 0; i-- {
		if err := pl.closers[i](); err != nil {
			t.Errorf("close: %v", err)
		}
	}
}

// durableCounts reads the counts a pipeline with p.Dir left in its files.
func durableCounts(t testing.TB, p pipelineParams) map[string]int64 {
	t.Helper()
	pl := &pipeline{p: p}
	for i := range countPartitions {
		m, err := bolt.Open(filepath.Join(p.Dir, fmt.Sprintf("counts-%d.db", i)), bolt.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		pl.maps = append(pl.maps, m)
	}
	c, err := pl.counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func keyName(i int) string { return fmt.Sprintf("k%d", i) }

// produceKeyed writes n records to topic over its partitions: record i has
// key k<i%keys> and goes to partition i%partitions; bad lists the indexes
// whose value is "bad" (rejected by keyDecoder). It returns the expected
// count per key of the good records.
func produceKeyed(t testing.TB, brokers []string, topic string, partitions, n, keys int, bad map[int]bool) map[string]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	transport := &kafkago.Transport{}
	defer transport.CloseIdleConnections()
	w := &kafkago.Writer{
		Addr: kafkago.TCP(brokers...), Topic: topic, Transport: transport,
		Balancer:     kafkago.BalancerFunc(func(m kafkago.Message, _ ...int) int { return int(m.Value[0]) % partitions }),
		RequiredAcks: kafkago.RequireAll, BatchTimeout: 2 * time.Millisecond,
		BatchSize: 20_000, BatchBytes: 900_000,
	}
	defer w.Close()
	want := map[string]int64{}
	const chunk = 50_000
	msgs := make([]kafkago.Message, 0, chunk)
	for i := range n {
		key := keyName(i % keys)
		// The first byte of the value selects the partition.
		value := []byte{byte(i % partitions), 'v'}
		if bad[i] {
			value = append([]byte{byte(i % partitions)}, "bad"...)
		} else {
			want[key]++
		}
		msgs = append(msgs, kafkago.Message{Key: []byte(key), Value: value})
		if len(msgs) == chunk || i == n-1 {
			if err := w.WriteMessages(ctx, msgs...); err != nil {
				t.Fatalf("produce: %.300v", err)
			}
			msgs = msgs[:0]
		}
	}
	return want
}
