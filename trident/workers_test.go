package trident

import (
	"context"
	"errors"
	"maps"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/transport"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/internal/runtime"
)

// TestWordCountAcrossWorkers runs a word count as two shares on loopback
// TCP: the master coordinator in share 0, the other executors spread over
// both, so batch announcements, data tuples with their attempts, reports,
// commits and acker messages all cross. Share 1 is killed after the first
// commit and restarted on its address; the batches it held or missed time
// out and are replayed, and the counts come out exact. The shares share
// the in-memory state and coordination store, as two processes would
// share a database.
func TestWordCountAcrossWorkers(t *testing.T) {
	src := newFixed(1, sentences...)
	f := OpaqueMemory[int64]("counts")
	tt := wordCount(src, f, 2)
	cfg := Config{MaxBatchesInFlight: 2, BatchEmitInterval: 10 * time.Millisecond, Store: coordstore.NewMemory()}
	cfg.Topology.MessageTimeout = 500 * time.Millisecond
	gen, err := tt.Acquire(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	addrs := map[int]string{}
	for i := range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addrs[i] = ln.Addr().String()
		ln.Close()
	}
	start := func(i int) *Running {
		t.Helper()
		var ln net.Listener
		for range 100 { // a port released by a stop may take a moment
			if ln, err = net.Listen("tcp", addrs[i]); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if err != nil {
			t.Fatal(err)
		}
		run, err := tt.RunShare(cfg, Share{Index: i, Count: 2, Generation: gen, Peers: addrs, Listener: ln,
			Client: transport.ClientConfig{MinBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		return run
	}
	kill := func(run *Running) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_ = run.Stop(ctx)
	}
	a, b := start(0), start(1)
	defer func() { kill(a); kill(b) }()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := a.WaitCommitted(ctx, 1); err != nil {
		t.Fatal(err)
	}
	kill(b)
	// While b is down the master goes on announcing batches; their trees
	// wait in a's transport queue and time out at the master (two to three
	// message timeouts), as do the trees b held.
	time.Sleep(2 * time.Second)
	b = start(1)
	if err := a.WaitCommitted(ctx, 6); err != nil {
		t.Fatal(err)
	}
	if got := readCounts(t, f, 2, words()...); !maps.Equal(got, wantCounts()) {
		t.Fatalf("counts = %v, want %v", got, wantCounts())
	}
	if st := a.Stats().Components[runtime.MasterComponent]; st.TimedOut == 0 {
		t.Fatalf("no master tree timed out while b was down: %+v", st)
	}
	if errs := append(a.Errors(), b.Errors()...); len(errs) > 0 {
		t.Fatalf("errors reported: %v", errs)
	}
	if b.Committed() != 0 {
		t.Fatalf("share 1 reports commits (%v): only the master's share knows them", b.Committed())
	}
}

// TestPlaceShares: the master coordinator runs in share 0, every task is
// placed, the tasks of an executor stay together, and the executors are
// spread evenly.
func TestPlaceShares(t *testing.T) {
	tt := wordCount(newFixed(1, sentences...), OpaqueMemory[int64]("counts"), 3)
	cfg := Config{}.withDefaults()
	cfg.Topology.Ackers = 2
	topo, _, err := tt.generate(&cfg, coordstore.Fence{Owner: "wordcount", Generation: 1})
	if err != nil {
		t.Fatal(err)
	}
	components := topo.TaskComponents(cfg.Topology.Ackers)
	for _, count := range []int{1, 2, 3, 5} {
		got := placeShares(topo, cfg.Topology.Ackers, count)
		if len(got) != len(components) {
			t.Fatalf("%d shares: %d tasks placed, want %d", count, len(got), len(components))
		}
		executors := map[int]int{}
		for task, component := range components {
			share := got[topology.TaskID(task)]
			if component == runtime.MasterComponent && share != MasterShare {
				t.Fatalf("%d shares: the master's task %d is in share %d", count, task, share)
			}
			if share < 0 || share >= count {
				t.Fatalf("%d shares: task %d in share %d", count, task, share)
			}
		}
		n := 0
		for component := range maps.Keys(componentSet(components)) {
			runs := topo.ExecutorTasks(component)
			if runs == nil {
				continue
			}
			for _, run := range runs {
				n++
				executors[got[run[0]]]++
				for _, task := range run[1:] {
					if got[task] != got[run[0]] {
						t.Fatalf("%d shares: executor %v of %s split across shares", count, run, component)
					}
				}
			}
		}
		for task, component := range components {
			if component == "__acker" {
				n++
				executors[got[topology.TaskID(task)]]++
			}
		}
		for share := range count {
			if e := executors[share]; e < n/count || e > n/count+1 {
				t.Fatalf("%d shares: share %d runs %d of %d executors: %v", count, share, e, n, executors)
			}
		}
	}
}

func componentSet(components []string) map[string]bool {
	out := map[string]bool{}
	for _, c := range components {
		out[c] = true
	}
	return out
}

// TestRunShareRefusesBadShares names what is wrong.
func TestRunShareRefusesBadShares(t *testing.T) {
	tt := wordCount(newFixed(1, sentences...), OpaqueMemory[int64]("counts"), 2)
	store := coordstore.NewMemory()
	for _, c := range []struct {
		cfg   Config
		share Share
		want  string
	}{
		{Config{}, Share{Count: 1, Generation: 1}, "shared Config.Store"},
		{Config{Store: store}, Share{Count: 0, Generation: 1}, "Count is 0"},
		{Config{Store: store}, Share{Index: 2, Count: 2, Generation: 1}, "Index 2"},
		{Config{Store: store}, Share{Count: 1}, "Generation is zero"},
		{Config{Store: store}, Share{Count: 2, Generation: 1}, "no address for share 1"},
	} {
		_, err := tt.RunShare(c.cfg, c.share)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("RunShare(%+v) = %v, want an error containing %q", c.share, err, c.want)
		}
	}
	if _, err := tt.Acquire(context.Background(), Config{}); err == nil {
		t.Error("Acquire without a store succeeded")
	}
}

// TestValueTypeDeclarations: ids below MinValueTypeID and ids declared
// twice are refused with the topology's other mistakes.
func TestValueTypeDeclarations(t *testing.T) {
	type point struct{ X, Y int }
	tt := wordCount(newFixed(1, sentences...), OpaqueMemory[int64]("counts"), 1)
	JSONValueType[point](tt, MinValueTypeID-1)
	if _, err := tt.Submit(context.Background(), Config{}); err == nil || !strings.Contains(err.Error(), "Trident's own") {
		t.Fatalf("Submit with a reserved id: %v", err)
	}
	tt = wordCount(newFixed(1, sentences...), OpaqueMemory[int64]("counts"), 1)
	JSONValueType[point](tt, MinValueTypeID)
	JSONValueType[[]point](tt, MinValueTypeID)
	_, err := tt.RunShare(Config{Store: coordstore.NewMemory()}, Share{Count: 1, Generation: 1})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "is taken by") {
		t.Fatalf("RunShare with an id declared twice: %v", err)
	}
}

// TestPlanDigest: the same declaration gives the same digest; another
// parallelism or acker count gives another.
func TestPlanDigest(t *testing.T) {
	digest := func(parallelism, ackers int) string {
		t.Helper()
		cfg := Config{}
		cfg.Topology.Ackers = ackers
		d, err := wordCount(newFixed(1, sentences...), OpaqueMemory[int64]("counts"), parallelism).PlanDigest(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if first, again := digest(2, 1), digest(2, 1); first != again {
		t.Fatal("two digests of one declaration differ")
	}
	if digest(2, 1) == digest(3, 1) || digest(2, 1) == digest(2, 2) {
		t.Fatal("the digest ignores the parallelism or the ackers")
	}
}
