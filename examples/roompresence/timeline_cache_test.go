package main

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/squallstream/squall/examples/roompresence/room"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident"
)

// countingBacking counts, per key, the reads that reach the backing maps
// it opens.
type countingBacking struct {
	open  trident.BackingFactory
	mu    sync.Mutex
	reads map[string]int
}

func (c *countingBacking) factory(ctx context.Context, partition, numPartitions int) (state.BackingMap[[]byte], error) {
	m, err := c.open(ctx, partition, numPartitions)
	if err != nil {
		return nil, err
	}
	return countingMap{BackingMap: m, c: c}, nil
}

type countingMap struct {
	state.BackingMap[[]byte]
	c *countingBacking
}

func (m countingMap) MultiGet(ctx context.Context, keys []state.Key) ([]state.Entry[[]byte], error) {
	m.c.mu.Lock()
	for _, k := range keys {
		m.c.reads[k.Encoded()]++
	}
	m.c.mu.Unlock()
	return m.BackingMap.MultiGet(ctx, keys)
}

func (m countingMap) ConcurrentSafe() bool { return state.IsConcurrent(m.BackingMap) }

// TestTimelinesReadFromCache runs the pipeline without faults over many
// small batches, so that each room hour is updated by many batches, and
// checks that the room_timelines store is read once per room hour (the
// first time its task sees it): later batches read it from the cache in
// front of the opaque map. The results must still match exactly.
func TestTimelinesReadFromCache(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	src, want, n := generatedSource(t, room.GenConfig{People: 40, Rooms: 2, VisitsPerPerson: 6, Seed: 5}, 2, 10)
	st, err := openEmbedded(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	counted := &countingBacking{open: st.Timelines(), reads: map[string]int{}}
	tt := trident.NewTopology("roompresence")
	events := decodedEvents(tt, src)
	pipeline{presence: st, timelines: counted.factory, tasks: 2}.build(tt, events)

	cluster := topology.NewLocalCluster()
	defer cluster.Shutdown(context.Background())
	cfg := trident.Config{}
	cfg.Store = st.Coordination()
	cfg.Cluster = cluster
	r, err := tt.Submit(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	waitForStore(ctx, t, r, st, want, time.Minute)
	if err := r.WaitCommitted(ctx, r.Committed()+2); err != nil {
		t.Fatal(err)
	}
	counted.mu.Lock()
	defer counted.mu.Unlock()
	if len(counted.reads) != len(want.Timelines) {
		t.Fatalf("%d room hours read, %d expected", len(counted.reads), len(want.Timelines))
	}
	for k, reads := range counted.reads {
		if reads != 1 {
			t.Errorf("room hour %x read %d times from the store; want once", k, reads)
		}
	}
	t.Logf("%d records in %d batches, %d room hours each read once", n, r.Committed(), len(want.Timelines))
}
