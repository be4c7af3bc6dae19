package topology

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/transport"
)

// wordCounts is a word count's output, shared by the count tasks of every
// worker (the test's stand-in for a database).
type wordCounts struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *wordCounts) get() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}

// wordCountTopology is feed -> split (2 tasks) -> count (2 tasks, by
// word). Split waits delay per sentence (in a bubble, virtual time), so
// that trees are in flight when a worker dies.
func wordCountTopology(t testing.TB, f *feed, counts *wordCounts, delay time.Duration) *Topology {
	b := NewBuilder()
	b.Spout("feed", f.newSpout).Output("sentence")
	b.BasicBolt("split", func() BasicBolt {
		return BasicBoltFunc(func(tu *Tuple, out *BasicCollector) error {
			if delay > 0 {
				time.Sleep(delay)
			}
			for _, w := range strings.Fields(tu.String("sentence")) {
				out.Emit(Values{w})
			}
			return nil
		})
	}).Parallelism(2).Output("word").Input("feed", Shuffle())
	b.BasicBolt("count", func() BasicBolt {
		return BasicBoltFunc(func(tu *Tuple, out *BasicCollector) error {
			counts.mu.Lock()
			counts.n[tu.String("word")]++
			counts.mu.Unlock()
			return nil
		})
	}).Parallelism(2).Input("split", ByFields("word"))
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

var wcSentences = []string{"the cow jumped over the moon", "an apple a day", "the man went to the store"}

// addSentences adds n sentences with ids from..from+n-1 and returns the
// word counts they make.
func addSentences(f *feed, from, n int, want map[string]int) {
	for i := from; i < from+n; i++ {
		s := wcSentences[i%len(wcSentences)]
		f.add(i, s)
		for _, w := range strings.Fields(s) {
			want[w]++
		}
	}
}

// ackedOnce checks that every id in [0, n) was acked exactly once.
func ackedOnce(t testing.TB, f *feed, n int) {
	t.Helper()
	for i := range n {
		if got := f.ackCount(i); got != 1 {
			t.Fatalf("message %d acked %d times, want once", i, got)
		}
	}
}

// TestWorkersWordCount runs a word count split over two workers on
// loopback TCP, with tuples crossing both ways: sentences from the spout
// in a to split in b, words from split in b to count in a, acks from count
// in a to the acker in b, outcomes from b to the spout in a.
func TestWorkersWordCount(t *testing.T) {
	f := newFeed()
	counts := &wordCounts{n: map[string]int{}}
	cfg := DefaultConfig()
	cfg.MaxSpoutPending = 64
	ws := newWorkers(t, wordCountTopology(t, f, counts, 0), cfg, nil,
		map[string]WorkerID{"feed": "a", "count": "a", "split": "b", ackerComponent: "b"})
	const n = 500
	want := map[string]int{}
	addSentences(f, 0, n, want)
	ws.startAll()
	waitUntil(t, 30*time.Second, "every sentence acked", func() bool { a, _ := f.counts(); return a == n })
	expectCounts(t, f, n, 0)
	ackedOnce(t, f, n)
	if got := counts.get(); !maps.Equal(got, want) {
		t.Fatalf("counts %v, want %v", got, want)
	}
	st := ws.stats()
	if st["split"].Executed != n || st[ackerComponent].Acked != n || st["feed"].Orphans != 0 {
		t.Fatalf("stats %+v", st)
	}
	for w, r := range ws.running {
		for peer, ps := range r.PeerStats() {
			if ps.Sent == 0 || ps.Lost != 0 {
				t.Fatalf("worker %s -> %s: %+v", w, peer, ps)
			}
		}
	}
}

// TestWorkerRestartReplays kills the worker of the bolts and the acker in
// the middle of a run, then the worker of the spout, restarting each on
// its address. Every message is acked exactly once in the end: the trees
// lost with the bolts' worker are failed by the spout's worker when it
// reconnects to the restarted one (their acker is gone) and are
// replayed; those lost with the spout's worker are replayed by its
// source. Runs in virtual time over an in-memory network.
func TestWorkerRestartReplays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFeed()
		f.replay = true
		counts := &wordCounts{n: map[string]int{}}
		cfg := DefaultConfig()
		cfg.MessageTimeout = 10 * time.Second
		cfg.MaxSpoutPending = 50
		cfg.SpoutIdleWait = 20 * time.Millisecond
		ws := newWorkers(t, wordCountTopology(t, f, counts, 10*time.Millisecond), cfg, newMemNet(),
			map[string]WorkerID{"feed": "a", "split": "b", "count": "b", ackerComponent: "b"})
		const n = 300 // 1.5s of split work in each of its two tasks
		addSentences(f, 0, n, map[string]int{})
		ws.startAll()
		acked := func() int { a, _ := f.counts(); return a }

		time.Sleep(505 * time.Millisecond) // split tasks are in the middle of a sentence
		if a := acked(); a == 0 || a >= n-100 {
			t.Fatalf("%d acked before the kill; want some, with trees in flight", a)
		}
		t.Logf("%d of %d acked when b is killed", acked(), n)
		ws.kill("b")
		time.Sleep(3 * time.Second) // a's client retries with backoff meanwhile
		ws.start("b")
		waitUntil(t, 2*time.Minute, "every message acked after b restarted", func() bool { return acked() == n })
		ackedOnce(t, f, n)
		if _, failed := f.counts(); failed == 0 {
			t.Fatal("no tree failed; the kill lost nothing in flight")
		}
		// a finds b restarted when it reconnects and fails the trees
		// pending then at once (their acker died with b), not after the
		// message timeout.
		if pl := ws.running["a"].PeerLosses(); pl.Losses != 1 || pl.TreesFailed == 0 {
			t.Fatalf("a's peer losses %+v: want b's restart, with trees failed", pl)
		}
		if st := ws.stats()["feed"]; st.TimedOut != 0 {
			t.Fatalf("the spout timed trees out: %+v", st)
		}
		_, failed := f.counts()
		t.Logf("after b's restart: %d failed, spout stats %+v, a -> b %+v", failed, ws.stats()["feed"], ws.running["a"].PeerStats()["b"])
		if ps := ws.running["a"].PeerStats()["b"]; ps.Connects < 2 {
			t.Fatalf("a -> b connected %d times; want a reconnect", ps.Connects)
		}

		addSentences(f, n, n, map[string]int{})
		time.Sleep(505 * time.Millisecond) // split tasks are in the middle of a sentence
		ws.kill("a")
		time.Sleep(3 * time.Second)
		ws.start("a")
		waitUntil(t, 2*time.Minute, "every message acked after a restarted", func() bool { return acked() == 2*n })
		ackedOnce(t, f, 2*n)
		ws.stopAll()
	})
}

// TestWorkerResetTimeoutCrossesWorkers holds a tree in a bolt of worker b
// for five message timeouts, resetting its timeout: the acker forwards
// the resets to the spout in worker a, whose own timeout must not fail the
// tree.
func TestWorkerResetTimeoutCrossesWorkers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFeed()
		b := NewBuilder()
		b.Spout("feed", f.newSpout).Output("v")
		b.Bolt("keep", keepAlive().newBolt).Input("feed", Global())
		cfg := DefaultConfig()
		cfg.MessageTimeout = 10 * time.Second
		cfg.SpoutIdleWait = 100 * time.Millisecond
		ws := newWorkers(t, mustBuild(t, b), cfg, newMemNet(),
			map[string]WorkerID{"feed": "a", "keep": "b", ackerComponent: "b"})
		ws.startAll()
		f.add("kept", "keep")
		for range 10 { // 50 seconds
			time.Sleep(5 * time.Second)
			f.add(nil, "ping")
		}
		if f.failCount("kept") != 0 || f.ackCount("kept") != 0 {
			t.Fatalf("the tree with resets finished before it was released: acked %d, failed %d", f.ackCount("kept"), f.failCount("kept"))
		}
		f.add(nil, "release")
		waitUntil(t, time.Minute, "the kept tree acked", func() bool { return f.ackCount("kept") == 1 })
		ws.stopAll()
	})
}

// TestTaskIDsAreDeterministic: task ids depend only on the declaration,
// not on the order of declaring components, so every worker computes the
// same ids; acker tasks follow the components'.
func TestTaskIDsAreDeterministic(t *testing.T) {
	build := func(order []string) *Topology {
		b := NewBuilder()
		for _, id := range order {
			switch id {
			case "src":
				b.Spout("src", newFeed().newSpout).Output("v").Parallelism(2)
			case "mid":
				b.Bolt("mid", boltFunc(identity).newBolt).Output("v").Input("src", Shuffle()).Parallelism(2).Tasks(3)
			case "end":
				b.Bolt("end", boltFunc(ackAll).newBolt).Input("mid", Shuffle())
			}
		}
		return mustBuild(t, b)
	}
	want := []string{"end", "mid", "mid", "mid", "src", "src", ackerComponent, ackerComponent}
	for _, order := range [][]string{{"src", "mid", "end"}, {"end", "mid", "src"}, {"mid", "src", "end"}} {
		topo := build(order)
		if got := topo.TaskComponents(2); !slices.Equal(got, want) {
			t.Fatalf("declared %v: tasks %v, want %v", order, got, want)
		}
		if got := topo.ExecutorTasks("mid"); !slices.EqualFunc(got, [][]TaskID{{1, 2}, {3}}, slices.Equal) {
			t.Fatalf("executors of mid: %v", got)
		}
		p := newPlan(topo, Config{Ackers: 2}.withDefaults())
		if !slices.Equal(p.ackerTasks, []TaskID{6, 7}) {
			t.Fatalf("acker tasks %v", p.ackerTasks)
		}
	}
}

func TestRunWorkerRejectsBadAssignments(t *testing.T) {
	b := NewBuilder()
	b.Spout("src", newFeed().newSpout).Output("v")
	b.Bolt("mid", boltFunc(ackAll).newBolt).Input("src", Shuffle()).Parallelism(1).Tasks(2)
	topo := mustBuild(t, b)
	for _, tc := range []struct {
		name  string
		tasks map[TaskID]WorkerID
		peers map[WorkerID]string
		want  string
	}{
		{"unassigned acker", map[TaskID]WorkerID{0: "a", 1: "a", 2: "a"}, nil, "task 3 (__acker) is not assigned"},
		{"split executor", map[TaskID]WorkerID{0: "a", 1: "b", 2: "a", 3: "a"}, map[WorkerID]string{"b": "x:1"}, "share an executor"},
		{"no address", map[TaskID]WorkerID{0: "a", 1: "a", 2: "a", 3: "b"}, nil, `worker "b" runs __acker but has no address`},
		{"unknown task", map[TaskID]WorkerID{0: "a", 1: "a", 2: "a", 3: "a", 9: "a"}, nil, "task 9 does not exist"},
	} {
		_, err := RunWorker("t", topo, DefaultConfig(), WorkerSpec{Self: "a", Tasks: tc.tasks, Peers: tc.peers})
		if !errors.Is(err, ErrInvalidAssignment) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestLocalOrShufflePrefersLocalTasks: with a bolt's tasks in both
// workers, LocalOrShuffle sends only to the emitter's worker.
func TestLocalOrShufflePrefersLocalTasks(t *testing.T) {
	f := newFeed()
	var mu sync.Mutex
	seen := map[TaskID]int{}
	b := NewBuilder()
	b.Spout("feed", f.newSpout).Output("v")
	b.Bolt("sink", func() Bolt {
		var task TaskID
		return &prepareBolt{prepare: func(info TaskInfo) { task = info.Task }, execute: func(out *OutputCollector, tu *Tuple) {
			mu.Lock()
			seen[task]++
			mu.Unlock()
			out.Ack(tu)
		}}
	}).Parallelism(2).Input("feed", LocalOrShuffle())
	topo := mustBuild(t, b)
	// Tasks: feed 0, sink 1 and 2; the acker 3.
	ws := newWorkers(t, topo, DefaultConfig(), nil, map[string]WorkerID{"feed": "a", "sink": "a", ackerComponent: "b"})
	ws.tasks[2] = "b"
	for i := range 20 {
		f.add(i, fmt.Sprint(i))
	}
	ws.startAll()
	waitUntil(t, 30*time.Second, "every message acked", func() bool { a, _ := f.counts(); return a == 20 })
	mu.Lock()
	defer mu.Unlock()
	if seen[1] != 20 || seen[2] != 0 {
		t.Fatalf("tuples by task %v; want all 20 at the local task 1", seen)
	}
}

// prepareBolt is a bolt with a hook in Prepare.
type prepareBolt struct {
	prepare func(TaskInfo)
	execute func(out *OutputCollector, t *Tuple)
	out     *OutputCollector
}

func (b *prepareBolt) Prepare(_ context.Context, info TaskInfo, out *OutputCollector) error {
	b.out = out
	b.prepare(info)
	return nil
}
func (b *prepareBolt) Execute(t *Tuple) { b.execute(b.out, t) }
func (b *prepareBolt) Cleanup() error   { return nil }

// TestBadPeerMessagesAreDroppedAndCounted sends a worker messages that do
// not fit the topology: they are dropped and counted, and the worker goes
// on delivering good ones.
func TestBadPeerMessagesAreDroppedAndCounted(t *testing.T) {
	f := newFeed()
	var mu sync.Mutex
	var got []string
	b := NewBuilder()
	b.Spout("feed", f.newSpout).Output("v")
	b.Bolt("sink", func() Bolt {
		return &prepareBolt{prepare: func(TaskInfo) {}, execute: func(out *OutputCollector, tu *Tuple) {
			mu.Lock()
			got = append(got, tu.SourceComponent()+"/"+tu.SourceStream()+":"+fmt.Sprint(tu.Value(0)))
			mu.Unlock()
			out.Ack(tu)
		}}
	}).Input("feed", Shuffle())
	// Tasks: feed 0, sink 1, the acker 2.
	ws := newWorkers(t, mustBuild(t, b), DefaultConfig(), nil, map[string]WorkerID{"feed": "a", "sink": "b", ackerComponent: "b"})
	r := ws.start("b")
	cli, err := transport.NewClient(context.Background(), transport.ClientConfig{Topology: ws.name, Worker: "a", Peer: "b", Addr: ws.addrs["b"]})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	send := func(m transport.Message) {
		t.Helper()
		if err := cli.Send(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	send(transport.Message{Kind: transport.KindTuple, Task: 1, Stream: "nope", Source: 0, Values: []any{1}})           // undeclared stream
	send(transport.Message{Kind: transport.KindTuple, Task: 1, Stream: DefaultStream, Source: 0, Values: []any{1, 2}}) // too many values
	send(transport.Message{Kind: transport.KindTuple, Task: 0, Stream: DefaultStream, Source: 0, Values: []any{1}})    // a task b does not run
	send(transport.Message{Kind: transport.KindAck, Task: 1, Root: 5, XOR: 1})                                         // an ack for a bolt
	send(transport.Message{Kind: transport.KindInit, Task: 2, Root: 5, XOR: 1, Source: 1})                             // an init from a bolt
	send(transport.Message{Kind: transport.KindTuple, Task: 1, Stream: DefaultStream, Source: 0, Values: []any{"ok"}})
	waitUntil(t, 10*time.Second, "five drops and one delivery", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return r.PeerDrops() == 5 && len(got) == 1
	})
	if got[0] != "feed/default:ok" {
		t.Fatalf("delivered %q", got[0])
	}
	if h := r.Health(); h.Crashes != 0 {
		t.Fatalf("health %+v", h)
	}
}

// TestUnsendableValueIsReportedOthersSentOnce emits, in the middle of a
// batch for another worker, a value the wire cannot carry: that tuple is
// reported and dropped, every other one arrives exactly once.
func TestUnsendableValueIsReportedOthersSentOnce(t *testing.T) {
	type point struct{ X, Y int }
	f := newFeed()
	var mu sync.Mutex
	seen := map[any]int{}
	b := NewBuilder()
	b.Spout("feed", f.newSpout).Output("v")
	b.Bolt("sink", func() Bolt {
		return &prepareBolt{prepare: func(TaskInfo) {}, execute: func(out *OutputCollector, tu *Tuple) {
			mu.Lock()
			seen[tu.Value(0)]++
			mu.Unlock()
			out.Ack(tu)
		}}
	}).Input("feed", Shuffle())
	ws := newWorkers(t, mustBuild(t, b), DefaultConfig(), nil, map[string]WorkerID{"feed": "a", "sink": "b", ackerComponent: "b"})
	for i := range 20 {
		if i == 7 {
			f.add(i, point{1, 2})
			continue
		}
		f.add(i, i)
	}
	ws.start("b")
	a := ws.start("a")
	waitUntil(t, 30*time.Second, "19 messages acked", func() bool { n, _ := f.counts(); return n == 19 })
	mu.Lock()
	defer mu.Unlock()
	for i := range 20 {
		if want := map[bool]int{true: 0, false: 1}[i == 7]; seen[i] != want {
			t.Fatalf("value %d arrived %d times, want %d (all: %v)", i, seen[i], want, seen)
		}
	}
	errs := a.Errors()
	if len(errs) != 1 || !errors.Is(errs[0].Err, transport.ErrUnsupportedValue) || errs[0].Component != "feed" {
		t.Fatalf("reported errors %v; want the unsupported value, from feed", errs)
	}
	ws.kill("a") // the dropped tree would only time out
	ws.kill("b")
}
