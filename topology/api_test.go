package topology

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
)

// activationSpout records Activate and Deactivate calls.
type activationSpout struct {
	feedSpout
	mu     *sync.Mutex
	events *[]string
}

func (s *activationSpout) Activate() {
	s.mu.Lock()
	defer s.mu.Unlock()
	*s.events = append(*s.events, "activate")
}

func (s *activationSpout) Deactivate() {
	s.mu.Lock()
	defer s.mu.Unlock()
	*s.events = append(*s.events, "deactivate")
}

func TestActivatorIsToldAboutActivation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var events []string
		f := newFeed()
		b := NewBuilder()
		b.Spout("s", func() Spout {
			return &activationSpout{feedSpout: feedSpout{f: f}, mu: &mu, events: &events}
		}).Output("v")
		b.Bolt("sink", boltFunc(ackAll).newBolt).Input("s", Shuffle())
		r := submit(t, mustBuild(t, b), DefaultConfig())
		settle()
		r.Deactivate()
		settle()
		r.Activate()
		settle()
		stop(t, r) // Stop deactivates first
		mu.Lock()
		defer mu.Unlock()
		if got := fmt.Sprint(events); got != "[activate deactivate activate deactivate]" {
			t.Fatalf("events = %s", got)
		}
	})
}

// TestBoltStreamsAndDirectEmits: a bolt emits on a second stream and
// directly to chosen tasks; every tree completes.
func TestBoltStreamsAndDirectEmits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, rec, side := newFeed(), newRecorder(), newRecorder()
		b := NewBuilder()
		b.Spout("feed", f.newSpout).Output("n")
		b.Bolt("router", func() Bolt { return &routerBolt{} }).
			DirectStream("direct", "n").OutputStream("side", "n").Input("feed", Shuffle())
		b.Bolt("rec", rec.newBolt).Tasks(2).InputStream("router", "direct", Direct())
		b.Bolt("side", side.newBolt).InputStream("router", "side", Shuffle())
		r := submit(t, mustBuild(t, b), DefaultConfig())
		for i := range 6 {
			f.add(i, i)
		}
		settle()
		expectCounts(t, f, 6, 0)
		targets := rec.tasks["rec"]
		got := rec.received()
		if len(got[targets[0]]) != 3 || len(got[targets[1]]) != 3 {
			t.Fatalf("direct emits: %v", got)
		}
		for _, vs := range got[targets[1]] {
			if vs[0].(int)%2 != 1 {
				t.Fatalf("task %d received %v", targets[1], vs)
			}
		}
		total := 0
		for _, vs := range side.received() {
			total += len(vs)
		}
		if total != 6 {
			t.Fatalf("side stream received %d, want 6", total)
		}
		if s := r.Stats().Components["router"]; s.Executed != 6 || s.Emitted != 12 || s.Acked != 6 {
			t.Fatalf("router stats = %+v", s)
		}
		stop(t, r)
	})
}

// routerBolt sends n directly to rec's task n mod 2 and also on "side".
type routerBolt struct {
	out     *OutputCollector
	targets []TaskID
}

func (b *routerBolt) Prepare(_ context.Context, info TaskInfo, out *OutputCollector) error {
	b.out, b.targets = out, info.Tasks("rec")
	return nil
}

func (b *routerBolt) Execute(t *Tuple) {
	n := t.Value(0).(int)
	b.out.EmitDirect(b.targets[n%len(b.targets)], "direct", Values{n}, t)
	b.out.EmitStream("side", Values{n}, t)
	b.out.Ack(t)
}

func (b *routerBolt) Cleanup() error { return nil }

func TestTaskInfo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var infos []TaskInfo
		f := newFeed()
		b := NewBuilder()
		b.Spout("feed", f.newSpout).Output("n")
		b.BasicBolt("b", func() BasicBolt { return &infoBolt{mu: &mu, infos: &infos} }).Parallelism(2).Tasks(3).Input("feed", Shuffle())
		r := submit(t, mustBuild(t, b), DefaultConfig())
		settle()
		stop(t, r)
		mu.Lock()
		defer mu.Unlock()
		seen := map[int]bool{}
		for _, in := range infos {
			if in.Component != "b" || in.NumTasks != 3 || len(in.Tasks("b")) != 3 || in.Tasks("nope") != nil {
				t.Fatalf("task info %+v", in)
			}
			seen[in.Index] = true
		}
		if len(seen) != 3 {
			t.Fatalf("task indexes seen: %v", seen)
		}
	})
}

type infoBolt struct {
	mu    *sync.Mutex
	infos *[]TaskInfo
}

func (b *infoBolt) Prepare(_ context.Context, info TaskInfo) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	*b.infos = append(*b.infos, info)
	return nil
}

func (b *infoBolt) Execute(*Tuple, *BasicCollector) error { return nil }

func TestErrorLogKeepsTheMostRecent(t *testing.T) {
	var l errorLog
	for i := range errorLogSize + 5 {
		l.add(ReportedError{Err: fmt.Errorf("error %d", i)})
	}
	got := l.recent()
	if len(got) != errorLogSize || got[0].Err.Error() != "error 5" || got[len(got)-1].Err.Error() != fmt.Sprintf("error %d", errorLogSize+4) {
		t.Fatalf("kept %d errors from %v to %v", len(got), got[0].Err, got[len(got)-1].Err)
	}
}

func TestPrepareErrorCrashesWorker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errPrepare := errors.New("no database")
		f := newFeed()
		b := NewBuilder()
		b.Spout("feed", f.newSpout).Output("n")
		b.Bolt("b", func() Bolt { return &prepareFails{err: errPrepare} }).Input("feed", Shuffle())
		r := submit(t, mustBuild(t, b), DefaultConfig())
		settle()
		h := r.Health()
		if h.Crashes == 0 || !errors.Is(h.LastCrash, errPrepare) || h.LastCrash.Component != "b" {
			t.Fatalf("health = %+v", h)
		}
		stop(t, r)
	})
}

type prepareFails struct{ err error }

func (p *prepareFails) Prepare(context.Context, TaskInfo, *OutputCollector) error { return p.err }
func (p *prepareFails) Execute(*Tuple)                                            {}
func (p *prepareFails) Cleanup() error                                            { return nil }

func TestNewTestTuple(t *testing.T) {
	tu := NewTestTuple("words", "default", Fields{"word", "n"}, Values{"cow", 2})
	if tu.SourceComponent() != "words" || tu.SourceStream() != "default" || tu.String("word") != "cow" || tu.Get("n") != 2 || tu.Tracked() {
		t.Fatalf("tuple = %+v", tu)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("mismatched fields and values accepted")
		}
	}()
	NewTestTuple("c", "s", Fields{"a"}, Values{1, 2})
}
