package trident

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/bolt"
	"github.com/squallstream/squall/state/opaque"
	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident/coordstore/boltstore"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/trident/spout/spouttest"
)

// durableRun is one "process": a topology over state and a coordination
// store in files under dir, reading src.
type durableRun struct {
	store   *boltstore.Store
	maps    []*bolt.Map
	cluster *topology.LocalCluster
	running *Running
}

const durablePartitions = 2

func startDurable(t *testing.T, dir string, src *spouttest.Source) *durableRun {
	t.Helper()
	ctx := context.Background()
	d := &durableRun{cluster: topology.NewLocalCluster()}
	var err error
	if d.store, err = boltstore.Open(ctx, filepath.Join(dir, "coord.db"), boltstore.Options{}); err != nil {
		t.Fatal(err)
	}
	for p := range durablePartitions {
		m, err := bolt.Open(filepath.Join(dir, fmt.Sprintf("counts-%d.db", p)), bolt.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		d.maps = append(d.maps, m)
	}
	factory := func(_ context.Context, p, _ int) (state.MapState[int64], error) {
		return opaque.New[int64](d.maps[p], state.MapOptions[int64]{}), nil
	}
	tt := NewTopology("durable")
	s := tt.NewStream("words", OpaqueSource(Fields{"partition", "offset", "word"}, src.Lister,
		func(int) spout.Emitter[spouttest.Offsets] { return src.Emitter() }))
	PersistentAggregate(s.GroupBy("word").Parallelism(durablePartitions), factory, Fields{"word"}, count{}, "count")
	cfg := Config{}
	cfg.Store = d.store
	cfg.BatchEmitInterval = time.Millisecond
	cfg.Cluster = d.cluster
	if d.running, err = tt.Submit(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	return d
}

// kill stops the process at once, as a crash would, and closes its files.
func (d *durableRun) kill(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = d.cluster.Shutdown(ctx)
	if err := d.store.Close(); err != nil {
		t.Fatal(err)
	}
	for _, m := range d.maps {
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestProcessRestartResumesFromLastCommit kills a process with durable
// state and coordination store in the middle of its work; a new process over
// the same files finishes it, and every record is counted exactly once.
func TestProcessRestartResumesFromLastCommit(t *testing.T) {
	dir := t.TempDir()
	src := spouttest.NewSource("p0", "p1")
	want := map[string]int64{}
	for i := range 300 {
		w := faultWords[i%len(faultWords)]
		src.Append(spout.Partition(fmt.Sprintf("p%d", i%2)), w)
		want[w]++
	}
	src.SetMaxBatch(7)

	first := startDurable(t, dir, src)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := first.running.WaitCommitted(ctx, 5); err != nil {
		t.Fatal(err)
	}
	killedAt := first.running.Committed()
	first.kill(t)

	second := startDurable(t, dir, src)
	defer second.kill(t)
	total := func() (n int64) {
		for p := range durablePartitions {
			ms := opaque.New[int64](second.maps[p], state.MapOptions[int64]{})
			vals, err := ms.MultiGet(ctx, keysOf(anys(faultWords)...))
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range vals {
				n += v.Val
			}
		}
		return n
	}
	for total() < 300 {
		if ctx.Err() != nil {
			t.Fatalf("only %d of 300 records counted", total())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := second.running.WaitCommitted(ctx, second.running.Committed()+3); err != nil {
		t.Fatal(err)
	}
	if n := total(); n != 300 {
		t.Fatalf("counted %d records, want 300 (first process committed up to txid %v)", n, killedAt)
	}
	if second.running.Committed() <= killedAt {
		t.Fatalf("the second process did not continue after txid %v", killedAt)
	}
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
