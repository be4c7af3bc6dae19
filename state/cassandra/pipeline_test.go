package cassandra_test

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/squallstream/squall/ops"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/cassandra"
	"github.com/squallstream/squall/state/cassandra/cassandratest"
	"github.com/squallstream/squall/state/opaque"
	"github.com/squallstream/squall/state/transactional"
	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident"
	"github.com/squallstream/squall/trident/coordstore/cassandrastore"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/trident/spout/spouttest"
)

// The fault tests run one topology with two streams over real Cassandra:
// an opaque source counted into an opaque table and a transactional
// source counted into a transactional table, with the coordination store
// in Cassandra too. Both sources hold the same fixed records, so the
// final counts of both tables must equal the oracle exactly.

const (
	pipelineRecords    = 240
	pipelinePartitions = 2
)

var pipelineWords = []string{"the", "cow", "jumped", "over", "moon", "man", "went", "to", "store", "and", "bought", "candy"}

// pipelineOracle is what both tables must hold in the end.
func pipelineOracle() map[string]int64 {
	want := map[string]int64{}
	for i := range pipelineRecords {
		want[pipelineWords[(i*7)%len(pipelineWords)]]++
	}
	return want
}

func newPipelineSource() *spouttest.Source {
	src := spouttest.NewSource("p0", "p1")
	for i := range pipelineRecords {
		src.Append(spout.Partition(fmt.Sprintf("p%d", i%2)), pipelineWords[(i*7)%len(pipelineWords)])
	}
	src.SetMaxBatch(5)
	return src
}

// pipelineTables are the tables of one pipeline, named so that a child
// process can open them.
type pipelineTables struct {
	op, tx    *cassandra.Table
	namespace string
}

// newPipelineTables creates the opaque and transactional tables of a
// test's pipeline in the test's keyspace.
func newPipelineTables(t *testing.T, s *cassandra.Session) pipelineTables {
	t.Helper()
	opSpec, txSpec := pipelineSpecs(cassandratest.Table(t), cassandratest.Table(t))
	tabs := pipelineTables{namespace: cassandratest.Table(t)}
	var err error
	if tabs.op, err = s.EnsureTable(t.Context(), opSpec); err != nil {
		t.Fatal(err)
	}
	if tabs.tx, err = s.EnsureTable(t.Context(), txSpec); err != nil {
		t.Fatal(err)
	}
	return tabs
}

func pipelineSpecs(opName, txName string) (cassandra.TableSpec, cassandra.TableSpec) {
	keys := []cassandra.Column{{Name: "word", Type: "text"}}
	return cassandra.TableSpec{Name: opName, Layout: cassandra.Opaque, Keys: keys, Values: cassandra.Typed[int64]("bigint")},
		cassandra.TableSpec{Name: txName, Layout: cassandra.Transactional, Keys: keys}
}

// wrapFunc may wrap the backing maps the topology opens; flavour is "op"
// or "tx".
type wrapFunc func(flavour string, partition int, b state.BackingMap[[]byte]) state.BackingMap[[]byte]

// pipelineRun is one "process" of the pipeline.
type pipelineRun struct {
	cluster *topology.LocalCluster
	running *trident.Running
	store   *cassandrastore.Store
}

func startPipeline(t *testing.T, s *cassandra.Session, tabs pipelineTables, wrap wrapFunc) *pipelineRun {
	t.Helper()
	ctx := t.Context()
	store, err := cassandrastore.Open(ctx, s, cassandrastore.Options{Namespace: tabs.namespace})
	if err != nil {
		t.Fatal(err)
	}
	backing := func(flavour string, table *cassandra.Table) trident.BackingFactory {
		return func(ctx context.Context, p, n int) (state.BackingMap[[]byte], error) {
			b, err := table.Backing(ctx, p, n)
			if err != nil || wrap == nil {
				return b, err
			}
			return wrap(flavour, p, b), nil
		}
	}
	srcOp, srcTx := newPipelineSource(), newPipelineSource()
	fields := trident.Fields{"partition", "offset", "word"}
	tt := trident.NewTopology("pipeline")
	op := tt.NewStream("op", trident.OpaqueSource(fields, srcOp.Lister,
		func(int) spout.Emitter[spouttest.Offsets] { return srcOp.Emitter() }))
	trident.PersistentAggregate(op.GroupBy("word").Parallelism(pipelinePartitions),
		trident.Opaque[int64]("op", backing("op", tabs.op)), trident.Fields{"word"}, ops.Count{}, "count")
	tx := tt.NewStream("tx", trident.TransactionalSource(fields, srcTx.Lister,
		func(int) spout.Emitter[spouttest.Offsets] { return srcTx.Emitter() }))
	trident.PersistentAggregate(tx.GroupBy("word").Parallelism(pipelinePartitions),
		trident.Transactional[int64]("tx", backing("tx", tabs.tx)), trident.Fields{"word"}, ops.Count{}, "count")
	cfg := trident.Config{}
	cfg.Store = store
	cfg.BatchEmitInterval = 10 * time.Millisecond
	run := &pipelineRun{cluster: topology.NewLocalCluster(), store: store}
	cfg.Cluster = run.cluster
	if run.running, err = tt.Submit(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	return run
}

func (r *pipelineRun) stop(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := r.cluster.Shutdown(ctx); err != nil {
		t.Errorf("shutdown: %v", err)
	}
	if err := r.store.Close(); err != nil {
		t.Error(err)
	}
}

// readPipeline reads both tables' counts of every word.
func readPipeline(ctx context.Context, tabs pipelineTables) (op, tx map[string]int64, err error) {
	read := func(table *cassandra.Table, wrap func(state.BackingMap[[]byte]) state.MapState[int64]) (map[string]int64, error) {
		b, err := table.Open(ctx)
		if err != nil {
			return nil, err
		}
		keys := make([]state.Key, len(pipelineWords))
		for i, w := range pipelineWords {
			keys[i] = state.MustKey(w)
		}
		es, err := wrap(b).MultiGet(ctx, keys)
		if err != nil {
			return nil, err
		}
		got := map[string]int64{}
		for i, w := range pipelineWords {
			if es[i].Found {
				got[w] = es[i].Val
			}
		}
		return got, nil
	}
	if op, err = read(tabs.op, func(b state.BackingMap[[]byte]) state.MapState[int64] {
		return opaque.New[int64](b, state.MapOptions[int64]{})
	}); err != nil {
		return nil, nil, err
	}
	tx, err = read(tabs.tx, func(b state.BackingMap[[]byte]) state.MapState[int64] {
		return transactional.New[int64](b, state.MapOptions[int64]{})
	})
	return op, tx, err
}

func total(m map[string]int64) (n int64) {
	for _, v := range m {
		n += v
	}
	return n
}

// pipelineDrained is a txid by which every record has been counted: each
// batch takes up to 5 records of each of the 2 partitions, so 24 batches
// drain the 240 records; the rest is slack for a restart.
const pipelineDrained = 40

// finishPipeline waits until the pipeline has committed pipelineDrained
// batches (all later ones are empty) and compares both tables with the
// oracle exactly.
func finishPipeline(t *testing.T, r *pipelineRun, tabs pipelineTables) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	if err := r.running.WaitCommitted(ctx, pipelineDrained); err != nil {
		t.Fatalf("waiting for txid %d (committed %v): %v (topology: %v)", pipelineDrained, r.running.Committed(), err, r.running.Err())
	}
	op, tx, err := readPipeline(ctx, tabs)
	if err != nil {
		t.Fatal(err)
	}
	want := pipelineOracle()
	if !maps.Equal(op, want) {
		t.Errorf("opaque table (total %d) = %v, want %v (total %d)", total(op), op, want, pipelineRecords)
	}
	if !maps.Equal(tx, want) {
		t.Errorf("transactional table (total %d) = %v, want %v (total %d)", total(tx), tx, want, pipelineRecords)
	}
}
