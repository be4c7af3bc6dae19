package trident

import (
	"context"
	"maps"
	"net"
	"testing"
	"time"

	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/transport"
	"github.com/squallstream/squall/trident/internal/runtime"
)

// TestWordCountAcrossWorkers runs the generated topology of a word count
// as two workers on loopback TCP: the master coordinator and the source
// stage in a, the other stages and the acker in b, so batch announcements,
// data tuples with their attempts, reports, commits and acker messages all
// cross. Worker b is killed after the first commit and restarted on its
// address; the batches it held or missed time out at the master (whose
// acker died with b) and are replayed, and the counts come out exact.
//
// Submit cannot run a share of a topology yet, so the test builds the
// generated topology as Submit does and runs it with topology.RunWorker.
// The two workers share the process's Running (the committed txid the
// test waits on) and the in-memory state and coordination store, as two
// processes would share a database.
func TestWordCountAcrossWorkers(t *testing.T) {
	src := newFixed(1, sentences...)
	f := OpaqueMemory[int64]("counts")
	tt := wordCount(src, f, 2)
	cfg := Config{MaxBatchesInFlight: 2, BatchEmitInterval: 10 * time.Millisecond}.withDefaults()
	cfg.Topology.MessageTimeout = 500 * time.Millisecond
	topo, r, err := tt.build(context.Background(), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	tc := cfg.Topology
	tc.MaxSpoutPending = 0

	byComponent := map[string]topology.WorkerID{runtime.MasterComponent: "a", "__acker": "b"}
	for _, s := range r.plan.Stages {
		byComponent[s.Name] = "b"
		if s.IsSource() {
			byComponent[s.Name] = "a"
		}
	}
	tasks := map[topology.TaskID]topology.WorkerID{}
	for task, comp := range topo.TaskComponents(tc.Ackers) {
		tasks[topology.TaskID(task)] = byComponent[comp]
	}
	addrs := map[topology.WorkerID]string{}
	for _, w := range []topology.WorkerID{"a", "b"} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addrs[w] = ln.Addr().String()
		ln.Close()
	}
	start := func(w topology.WorkerID) *topology.Running {
		t.Helper()
		var ln net.Listener
		for range 100 { // a port released by a stop may take a moment
			if ln, err = net.Listen("tcp", addrs[w]); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if err != nil {
			t.Fatal(err)
		}
		run, err := topology.RunWorker("wordcount", topo, tc, topology.WorkerSpec{Self: w, Tasks: tasks, Peers: addrs, Listener: ln,
			Client: transport.ClientConfig{MinBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		return run
	}
	kill := func(run *topology.Running) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_ = run.Stop(ctx)
	}
	a, b := start("a"), start("b")
	defer func() { kill(a); kill(b) }()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := r.WaitCommitted(ctx, 1); err != nil {
		t.Fatal(err)
	}
	kill(b)
	// While b is down the master goes on announcing batches; their trees
	// wait in a's transport queue and time out at the master (two to three
	// message timeouts), as do the trees b held.
	time.Sleep(2 * time.Second)
	b = start("b")
	if err := r.WaitCommitted(ctx, 6); err != nil {
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
}
