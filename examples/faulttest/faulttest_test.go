package faulttest

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/bolt"
	"github.com/squallstream/squall/state/statetest"
	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident"
	"github.com/squallstream/squall/trident/coordstore/boltstore"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/trident/spout/spouttest"
)

var words = []string{"apple", "pear", "plum", "fig", "kiwi"}

// input appends n words over two partitions and returns the exact counts.
func input(src *spouttest.Source, n int) map[string]int64 {
	want := map[string]int64{}
	for i := range n {
		w := words[i%len(words)]
		src.Append(spout.Partition(fmt.Sprintf("p%d", i%2)), fmt.Sprintf("%s#%d", w, i))
		want[w]++
	}
	return want
}

type count struct{}

func (count) Init(trident.Tuple) (int64, error) { return 1, nil }
func (count) Combine(a, b int64) int64          { return a + b }
func (count) Zero() int64                       { return 0 }

// flakyOncePerRecord fails every record retryably the first time it sees
// it: each batch is replayed at least once. Records are told apart by
// their value ("word#i").
func flakyOncePerRecord() trident.Filter {
	var mu sync.Mutex
	seen := map[string]bool{}
	return trident.FilterFunc(func(_ context.Context, t trident.Tuple) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		rec := t.String("record")
		if !seen[rec] {
			seen[rec] = true
			return false, failure.Retryable(fmt.Errorf("first sight of %s", rec))
		}
		return true, nil
	})
}

// wordOf strips the record number: "apple#3" -> "apple".
var wordOf = trident.FunctionFunc(func(_ context.Context, t trident.Tuple, out trident.Collector) error {
	rec := t.String("record")
	for i := range len(rec) {
		if rec[i] == '#' {
			out.Emit(rec[:i])
			return nil
		}
	}
	out.Emit(rec)
	return nil
})

// build is the application's topology, with its state factory injected.
func build(src *spouttest.Source, counts trident.StateFactory[int64]) *trident.Topology {
	tt := trident.NewTopology("words")
	s := tt.NewStream("records", trident.OpaqueSource(trident.Fields{"partition", "offset", "record"}, src.Lister,
		func(int) spout.Emitter[spouttest.Offsets] { return src.Emitter() }))
	s = s.Filter(flakyOncePerRecord()).Each(trident.Fields{"record"}, wordOf, "word")
	trident.PersistentAggregate(s.GroupBy("word").Parallelism(2), counts, trident.Fields{"word"}, count{}, "count")
	return tt
}

// read sums the committed counts of every partition.
func read(t *testing.T, counts trident.StateFactory[int64]) map[string]int64 {
	t.Helper()
	got := map[string]int64{}
	for p := range 2 {
		ms, err := counts(context.Background(), p, 2)
		if err != nil {
			t.Fatal(err)
		}
		keys := make([]state.Key, len(words))
		for i, w := range words {
			keys[i] = state.MustKey(w)
		}
		es, err := ms.MultiGet(context.Background(), keys)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range es {
			if e.Found {
				got[words[i]] += e.Val
			}
		}
	}
	return got
}

// waitCounts polls until counts reach want (or a minute passes).
func waitCounts(t *testing.T, counts trident.StateFactory[int64], want map[string]int64) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		got := read(t, counts)
		if maps.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("counts = %v, want %v", got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRetryableFailuresAndStateFaults: every record fails once in a filter,
// and the second put of each partition's backing map fails after writing
// one key (a store that fails halfway); the counts are still exact.
func TestRetryableFailuresAndStateFaults(t *testing.T) {
	src := spouttest.NewSource("p0", "p1")
	want := input(src, 200)
	src.SetMaxBatch(9)

	var mu sync.Mutex
	faults := map[int]*statetest.FaultMap[[]byte]{}
	backing := func(ctx context.Context, p, n int) (state.BackingMap[[]byte], error) {
		mu.Lock()
		defer mu.Unlock()
		if faults[p] == nil {
			// Calls are numbered per operation from 1: put call 2 is the
			// partition's second commit (the first is the first batch's).
			faults[p] = statetest.NewFaultMap[[]byte](state.NewMemory(fmt.Sprintf("counts/%d", p)),
				statetest.FailCall(statetest.OpPut, 2, statetest.Retryable(1)))
		}
		return faults[p], nil
	}
	counts := trident.Opaque[int64]("counts", backing)

	cfg := trident.Config{}
	cfg.BatchEmitInterval = time.Millisecond
	cfg.RetryBackoff = time.Millisecond // replays at once: every record fails once
	cfg.MaxRetryBackoff = time.Millisecond
	r, err := build(src, counts).Submit(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop(context.Background())
	waitCounts(t, counts, want)
	for p, f := range faults {
		if f.Calls(statetest.OpPut) < 3 {
			t.Errorf("partition %d: %d puts, want the faulted second and later ones", p, f.Calls(statetest.OpPut))
		}
	}
}

// process is one run of the application over files in dir: bbolt state
// and a bbolt coordination store.
type process struct {
	cluster *topology.LocalCluster
	store   *boltstore.Store
	backing trident.BackingFactory
}

func start(t *testing.T, dir string, src *spouttest.Source) (*process, *trident.Running) {
	t.Helper()
	p := &process{cluster: topology.NewLocalCluster()}
	var err error
	if p.store, err = boltstore.Open(context.Background(), filepath.Join(dir, "coord.db"), boltstore.Options{}); err != nil {
		t.Fatal(err)
	}
	p.backing = trident.BoltBacking(filepath.Join(dir, "state.db"), "counts", bolt.Options{NoSync: true})
	cfg := trident.Config{}
	cfg.Store = p.store
	cfg.Cluster = p.cluster
	cfg.BatchEmitInterval = time.Millisecond
	cfg.RetryBackoff = time.Millisecond
	cfg.MaxRetryBackoff = time.Millisecond
	r, err := build(src, trident.Opaque[int64]("counts", p.backing)).Submit(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p, r
}

// kill stops the process at once, as SIGKILL would (no clean stop), and
// closes its files so a second process can open them.
func (p *process) kill(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = p.cluster.Shutdown(ctx)
	if err := p.store.Close(); err != nil {
		t.Fatal(err)
	}
	for part := range 2 {
		m, err := p.backing(context.Background(), part, 2)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.(*bolt.Map).Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestKilledProcessResumes kills the application in the middle of its
// work; a second process over the same files finishes it with exact counts.
func TestKilledProcessResumes(t *testing.T) {
	dir := t.TempDir()
	src := spouttest.NewSource("p0", "p1")
	want := input(src, 300)
	src.SetMaxBatch(7)

	first, r := start(t, dir, src)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := r.WaitCommitted(ctx, 3); err != nil {
		t.Fatal(err)
	}
	first.kill(t)

	second, _ := start(t, dir, src)
	defer second.kill(t)
	waitCounts(t, trident.Opaque[int64]("counts", second.backing), want)
}
