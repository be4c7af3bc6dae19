package worker

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/squallstream/squall/cluster/internal/etcdtest"
	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/internal/clock"
)

// TestGeneration: share 0 acquires the owner generation and records it
// for its epoch; the other shares take the recorded one, refuse another
// plan, wait for share 0 of their epoch, and see a newer epoch as a
// reassignment.
func TestGeneration(t *testing.T) {
	cli := etcdtest.Client(t, etcdtest.Embedded(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	newWorker := func(topology string, port int) *worker {
		cfg := Config{Client: cli, Prefix: "/g", Topology: Topology{Name: topology}, Slot: meta.Slot{Supervisor: "s1", Port: port},
			Logger: quiet}
		return &worker{cfg: cfg, keys: meta.New("/g"), log: quiet, clk: clock.Or(nil)}
	}
	a := &meta.Assignment{Topology: "t", Epoch: 2, Workers: []meta.Worker{{Slot: meta.Slot{Supervisor: "s1", Port: 7000}},
		{Slot: meta.Slot{Supervisor: "s1", Port: 7001}}}}
	acquired := 0
	acquire := func() (uint64, error) { acquired++; return 40 + uint64(acquired), nil }
	noAcquire := func() (uint64, error) { t.Error("a share other than 0 acquired"); return 0, nil }
	put := func(g meta.Generation) {
		if _, err := cli.Put(ctx, meta.New("/g").Generation("t"), meta.Encode(g)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cli.Put(ctx, meta.New("/g").Assignment("t"), meta.Encode(a)); err != nil {
		t.Fatal(err)
	}

	// Share 1 before share 0 recorded this epoch's generation: it waits.
	got := make(chan uint64, 1)
	go func() {
		g, err := newWorker("t", 7001).generation(ctx, a, 1, "plan", noAcquire)
		if err != nil {
			t.Error(err)
		}
		got <- g
	}()
	// An older epoch's record: it waits on (had it taken 7, it would say so below).
	put(meta.Generation{Topology: "t", Epoch: 1, Generation: 7, Plan: "plan"})
	gen, err := newWorker("t", 7000).generation(ctx, a, 0, "plan", acquire)
	if err != nil || gen != 41 {
		t.Fatalf("share 0: %d, %v; want 41", gen, err)
	}
	if g := <-got; g != 41 {
		t.Fatalf("share 1 waited for %d, want 41", g)
	}
	// A restart of share 0 in the same epoch acquires a newer one.
	if gen, err := newWorker("t", 7000).generation(ctx, a, 0, "plan", acquire); err != nil || gen != 42 {
		t.Fatalf("share 0 again: %d, %v; want 42", gen, err)
	}
	if gen, err := newWorker("t", 7001).generation(ctx, a, 1, "plan", noAcquire); err != nil || gen != 42 {
		t.Fatalf("share 1 again: %d, %v; want 42", gen, err)
	}
	if _, err := newWorker("t", 7001).generation(ctx, a, 1, "other", noAcquire); err == nil || !strings.Contains(err.Error(), "same topology") {
		t.Fatalf("another plan: %v, want a refusal", err)
	}
	failed := errors.New("no owner")
	if _, err := newWorker("t", 7000).generation(ctx, a, 0, "plan", func() (uint64, error) { return 0, failed }); !errors.Is(err, failed) {
		t.Fatalf("a failed acquisition: %v", err)
	}
	put(meta.Generation{Topology: "t", Epoch: 3, Generation: 50, Plan: "plan"})
	for share := range 2 {
		if _, err := newWorker("t", 7000+share).generation(ctx, a, share, "plan", noAcquire); !errors.Is(err, errReassigned) {
			t.Fatalf("share %d under a newer epoch's record: %v, want errReassigned", share, err)
		}
	}
}
