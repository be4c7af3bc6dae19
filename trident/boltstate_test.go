package trident

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"testing"
	"time"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/bolt"
	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident/coordstore/boltstore"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/trident/spout/spouttest"
)

// boltRun is one "process" of a word count into bbolt state: state and
// coordination store in files under dir.
type boltRun struct {
	store   *boltstore.Store
	backing BackingFactory
	cluster *topology.LocalCluster
	running *Running
}

const boltPartitions = 2

func startBoltRun(t *testing.T, dir string, src *spouttest.Source) *boltRun {
	t.Helper()
	ctx := context.Background()
	r := &boltRun{cluster: topology.NewLocalCluster()}
	var err error
	if r.store, err = boltstore.Open(ctx, filepath.Join(dir, "coord.db"), boltstore.Options{}); err != nil {
		t.Fatal(err)
	}
	r.backing = BoltBacking(filepath.Join(dir, "state.db"), "counts", bolt.Options{NoSync: true, LockTimeout: 200 * time.Millisecond})
	tt := NewTopology("boltcount")
	s := tt.NewStream("words", OpaqueSource(Fields{"partition", "offset", "word"}, src.Lister,
		func(int) spout.Emitter[spouttest.Offsets] { return src.Emitter() }))
	PersistentAggregate(s.GroupBy("word").Parallelism(boltPartitions), Opaque[int64]("counts", r.backing), Fields{"word"}, count{}, "count")
	cfg := Config{}
	cfg.Store = r.store
	cfg.BatchEmitInterval = time.Millisecond
	cfg.Cluster = r.cluster
	if r.running, err = tt.Submit(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	return r
}

// kill stops the process at once, as a crash would, and closes its files:
// the state file is closed once every partition's map gave its reference
// back.
func (r *boltRun) kill(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = r.cluster.Shutdown(ctx)
	if err := r.store.Close(); err != nil {
		t.Fatal(err)
	}
	for p := range boltPartitions {
		m, err := r.backing(context.Background(), p, boltPartitions)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.(*bolt.Map).Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOpaqueBoltWordCountAcrossRestart kills a word count into bbolt state
// in the middle of its work, checks that the state file was really closed
// (another open of it does not wait for its lock), and lets a second
// process over the same files finish: OpaqueBolt over the file then reads
// exact counts.
func TestOpaqueBoltWordCountAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	src := spouttest.NewSource("p0", "p1")
	want := map[string]int64{}
	for i := range 300 {
		w := faultWords[i%len(faultWords)]
		src.Append(spout.Partition(fmt.Sprintf("p%d", i%2)), w)
		want[w]++
	}
	src.SetMaxBatch(7)

	first := startBoltRun(t, dir, src)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := first.running.WaitCommitted(ctx, 5); err != nil {
		t.Fatal(err)
	}
	killedAt := first.running.Committed()
	first.kill(t)
	probe, err := bolt.Open(filepath.Join(dir, "state.db"), bolt.Options{LockTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("the state file is still held after every map was closed: %v", err)
	}
	if err := probe.Close(); err != nil {
		t.Fatal(err)
	}

	second := startBoltRun(t, dir, src)
	defer second.kill(t)
	counts := OpaqueBolt[int64](filepath.Join(dir, "state.db"), "counts")
	for {
		got := readCounts(t, counts, boltPartitions, faultWords...)
		var n int64
		for _, c := range got {
			n += c
		}
		if n >= 300 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("only %d of 300 records counted", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := second.running.WaitCommitted(ctx, second.running.Committed()+3); err != nil {
		t.Fatal(err)
	}
	if got := readCounts(t, counts, boltPartitions, faultWords...); !maps.Equal(got, want) {
		t.Fatalf("counts = %v, want %v (the first process committed up to txid %v)", got, want, killedAt)
	}
	if second.running.Committed() <= killedAt {
		t.Fatalf("the second process did not continue after txid %v", killedAt)
	}
}

// TestBoltBackingSharesTheFile opens two partitions of one state and a
// partition of another state in the same file: none waits for bbolt's
// lock (the file is opened once), and each writes its own bucket.
func TestBoltBackingSharesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	opts := bolt.Options{NoSync: true, LockTimeout: 100 * time.Millisecond}
	counts := BoltBacking(path, "counts", opts)
	sums := BoltBacking(path, "sums", opts)
	ctx := context.Background()
	var ms []state.BackingMap[[]byte]
	for _, open := range []func() (state.BackingMap[[]byte], error){
		func() (state.BackingMap[[]byte], error) { return counts(ctx, 0, 2) },
		func() (state.BackingMap[[]byte], error) { return counts(ctx, 1, 2) },
		func() (state.BackingMap[[]byte], error) { return sums(ctx, 0, 2) },
	} {
		m, err := open()
		if err != nil {
			t.Fatalf("open a map of a shared file: %v", err)
		}
		ms = append(ms, m)
	}
	k := []state.Key{state.MustKey("w")}
	for i, m := range ms {
		if err := m.MultiPut(ctx, k, [][]byte{{byte(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	for i, m := range ms {
		es, err := m.MultiGet(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if !es[0].Found || len(es[0].Val) != 1 || es[0].Val[0] != byte(i) {
			t.Errorf("map %d (%s) reads %+v, want its own value %d", i, m.(*bolt.Map).Name(), es[0], i)
		}
	}
	if again, _ := counts(ctx, 1, 2); again != ms[1] {
		t.Error("a second open of a partition (a worker restart) returned another map")
	}
	for _, m := range ms {
		if err := m.(*bolt.Map).Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBoltBackingFencing: once a newer owner generation opened a
// partition, a write of an older generation is refused, and so is an open
// by it in a later "process" (a new factory after the file was closed).
func TestBoltBackingFencing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	opts := bolt.Options{NoSync: true}
	old := state.WithFence(context.Background(), state.Fence{Owner: "wc", Generation: 1})
	newer := state.WithFence(context.Background(), state.Fence{Owner: "wc", Generation: 2})
	k := []state.Key{state.MustKey("w")}

	backing := BoltBacking(path, "counts", opts)
	m, err := backing(old, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.MultiPut(old, k, [][]byte{{1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := backing(newer, 0, 1); err != nil {
		t.Fatalf("open by the newer owner: %v", err)
	}
	err = m.MultiPut(old, k, [][]byte{{9}})
	var fe *state.FencedError
	if !errors.Is(err, state.ErrFenced) || !errors.As(err, &fe) || fe.Current != 2 {
		t.Fatalf("write of the older owner = %v, want a *state.FencedError naming generation 2", err)
	}
	if err := m.MultiPut(newer, k, [][]byte{{2}}); err != nil {
		t.Fatalf("write of the newer owner: %v", err)
	}
	if err := m.(*bolt.Map).Close(); err != nil {
		t.Fatal(err)
	}

	// The generation is kept in the file: a later process of the old
	// owner is refused at open.
	later := BoltBacking(path, "counts", opts)
	if _, err := later(old, 0, 1); !errors.Is(err, state.ErrFenced) {
		t.Fatalf("open by the older owner after a restart = %v, want state.ErrFenced", err)
	}
	m2, err := later(newer, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer m2.(*bolt.Map).Close()
	es, err := m2.MultiGet(context.Background(), k)
	if err != nil || !es[0].Found || es[0].Val[0] != 2 {
		t.Fatalf("read = %+v, %v; want the newer owner's 2", es, err)
	}
}
