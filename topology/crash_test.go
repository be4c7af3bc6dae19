package topology

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/failure"
)

// TestWorkerCrashRestartsAndReplays: a bolt panics on a poison tuple the
// first time it sees it; the worker restarts, the spout replays what was in
// flight, and every message is acked exactly once in the end.
func TestWorkerCrashRestartsAndReplays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFeed()
		f.replay = true
		var poisoned atomic.Bool
		b := NewBuilder()
		b.Spout("feed", f.newSpout).Output("n")
		b.Bolt("double", boltFunc(identity).newBolt).Output("n").Input("feed", Shuffle())
		b.Bolt("poison", boltFunc(func(out *OutputCollector, t *Tuple) {
			if t.Value(0) == 7 && poisoned.CompareAndSwap(false, true) {
				panic("poison tuple")
			}
			out.Ack(t)
		}).newBolt).Parallelism(2).Input("double", ByFields("n"))
		cfg := DefaultConfig()
		cfg.RestartMinBackoff = time.Second
		r := submit(t, mustBuild(t, b), cfg)
		const n = 50
		for i := range n {
			f.add(i, i)
		}
		settle()
		if h := r.Health(); h.Crashes != 1 || h.Running {
			t.Fatalf("health = %+v; want one crash and no worker during the restart backoff", h)
		}
		time.Sleep(2 * time.Second)
		settle()
		h := r.Health()
		if h.Crashes != 1 || !h.Running {
			t.Fatalf("health = %+v; want one crash and a running worker", h)
		}
		if c := h.LastCrash; c.Component != "poison" || !strings.Contains(c.Err.Error(), "poison tuple") ||
			!strings.Contains(string(c.Stack), "crash_test.go") {
			t.Fatalf("last crash = %v (stack %d bytes); want the poison bolt's panic with its stack", c, len(c.Stack))
		}
		for i := range n {
			if got := f.ackCount(i); got != 1 {
				t.Errorf("message %d acked %d times; want exactly once", i, got)
			}
		}
		if f.opens != 2 {
			t.Fatalf("spout opened %d times; want 2 (start and restart)", f.opens)
		}
		stop(t, r)
	})
}

func TestRestartBackoffGrows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var opens atomic.Int32
		b := NewBuilder()
		b.Spout("broken", func() Spout {
			return &openFailSpout{opens: &opens}
		}).Output("v")
		b.Bolt("sink", boltFunc(ackAll).newBolt).Input("broken", Shuffle())
		cfg := DefaultConfig()
		cfg.RestartMinBackoff = time.Second
		cfg.RestartMaxBackoff = 4 * time.Second
		r := submit(t, mustBuild(t, b), cfg)
		// Crashes at 0s, then restarts after 1s, 2s, 4s, 4s: at 1, 3, 7, 11.
		time.Sleep(7*time.Second + time.Millisecond)
		synctest.Wait()
		if got := opens.Load(); got != 4 {
			t.Fatalf("opened %d times in 7s; want 4 (backoff 1s, 2s, 4s)", got)
		}
		time.Sleep(4 * time.Second)
		synctest.Wait()
		if got := opens.Load(); got != 5 {
			t.Fatalf("opened %d times in 11s; want 5 (backoff capped at 4s)", got)
		}
		h := r.Health()
		if h.Crashes != 5 || !errors.Is(h.LastCrash, errOpen) {
			t.Fatalf("health = %+v; want 5 crashes caused by the open error", h)
		}
		stop(t, r)
	})
}

var errOpen = errors.New("cannot reach the source")

type openFailSpout struct{ opens *atomic.Int32 }

func (s *openFailSpout) Open(context.Context, TaskInfo, *SpoutCollector) error {
	s.opens.Add(1)
	return errOpen
}
func (s *openFailSpout) NextTuple()   {}
func (s *openFailSpout) Ack(any)      {}
func (s *openFailSpout) Fail(any)     {}
func (s *openFailSpout) Close() error { return nil }

var errBad = errors.New("bad record")

// basicBehaviour returns a BasicBolt that treats message values by name.
func basicBehaviour() BasicBolt {
	return BasicBoltFunc(func(t *Tuple, out *BasicCollector) error {
		switch t.String("v") {
		case "retry":
			return failure.Retryable(errBad)
		case "report":
			return failure.Reported(fmt.Errorf("record %v: %w", t.Value(0), errBad))
		case "fatal":
			return errBad
		}
		out.Emit(t.Values())
		return nil
	})
}

func TestBasicBoltErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFeed()
		b := NewBuilder()
		b.Spout("feed", f.newSpout).Output("v")
		b.BasicBolt("basic", basicBehaviour).Output("v").Input("feed", Shuffle())
		b.Bolt("sink", boltFunc(ackAll).newBolt).Input("basic", Shuffle())
		r := submit(t, mustBuild(t, b), DefaultConfig())
		f.add("ok", "ok")
		f.add("retry", "retry")
		f.add("report", "report")
		settle()
		if f.ackCount("ok") != 1 || f.failCount("retry") != 1 || f.failCount("report") != 1 {
			t.Fatalf("ok acked %d, retry failed %d, report failed %d; want 1 each",
				f.ackCount("ok"), f.failCount("retry"), f.failCount("report"))
		}
		errs := r.Errors()
		if len(errs) != 1 || errs[0].Component != "basic" || !errors.Is(errs[0].Err, errBad) {
			t.Fatalf("reported errors = %v; want the one reported failure", errs)
		}
		if r.Health().Crashes != 0 {
			t.Fatal("a retryable failure crashed the worker")
		}
		f.add("fatal", "fatal")
		settle()
		h := r.Health()
		if h.Crashes != 1 || h.LastCrash.Component != "basic" || !errors.Is(h.LastCrash, errBad) {
			t.Fatalf("health = %+v; want one crash caused by the fatal error", h)
		}
		stop(t, r)
	})
}

// TestBasicBoltAnchorsEmits: a BasicBolt's output joins the input's tree, so
// the tree stays pending until downstream acks it.
func TestBasicBoltAnchorsEmits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, control := newFeed(), newFeed()
		b := NewBuilder()
		b.Spout("feed", f.newSpout).Output("v")
		b.Spout("control", control.newSpout).Output("v")
		b.BasicBolt("basic", basicBehaviour).Output("v").Input("feed", Shuffle())
		b.Bolt("slow", holdUntilControl().newBolt).Input("basic", Shuffle()).Input("control", All())
		r := submit(t, mustBuild(t, b), DefaultConfig())
		f.add(1, "ok")
		settle()
		expectCounts(t, f, 0, 0)
		control.add(nil, "release")
		settle()
		expectCounts(t, f, 1, 0)
		stop(t, r)
	})
}

func TestAckTwiceIsReportedAndIgnored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFeed()
		b := NewBuilder()
		b.Spout("feed", f.newSpout).Output("v")
		b.Bolt("twice", boltFunc(func(out *OutputCollector, t *Tuple) {
			out.Ack(t)
			out.Ack(t)
			out.Fail(t)
		}).newBolt).Input("feed", Shuffle())
		r := submit(t, mustBuild(t, b), DefaultConfig())
		f.add(1, "x")
		settle()
		expectCounts(t, f, 1, 0)
		if errs := r.Errors(); len(errs) != 2 || !errors.Is(errs[0].Err, errAckedTwice) {
			t.Fatalf("errors = %v; want two acked-twice reports", errs)
		}
		stop(t, r)
	})
}

func TestStopDrainsPendingTrees(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFeed()
		b := NewBuilder()
		b.Spout("feed", f.newSpout).Output("v")
		b.Bolt("sink", boltFunc(ackAll).newBolt).Input("feed", Shuffle())
		r := submit(t, mustBuild(t, b), DefaultConfig())
		for i := range 100 {
			f.add(i, i)
		}
		time.Sleep(time.Millisecond) // let the spout start emitting
		if err := r.Stop(context.Background()); err != nil {
			t.Fatalf("stop: %v", err)
		}
		a, _ := f.counts()
		if emitted := r.Stats().Components["feed"].Emitted; uint64(a) != emitted {
			t.Fatalf("stop returned with %d acked of %d emitted", a, emitted)
		}
		select {
		case <-r.Done():
		default:
			t.Fatal("Done not closed after Stop")
		}
	})
}

// TestStopWaitsForASpoutMidRound: Stop must not trust the pending count
// while a spout is still inside NextTuple: the tuple it emits there is
// pending too, and Stop returns only once it is acked.
func TestStopWaitsForASpoutMidRound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFeed()
		gate := make(chan struct{})
		b := NewBuilder()
		b.Spout("feed", func() Spout { return &gatedSpout{feedSpout: feedSpout{f: f}, gate: gate} }).Output("v")
		b.Bolt("sink", boltFunc(ackAll).newBolt).Input("feed", Shuffle())
		r := submit(t, mustBuild(t, b), DefaultConfig())
		f.add(1, "x")
		synctest.Wait() // the spout waits at the gate, inside NextTuple
		stopped := make(chan error, 1)
		go func() { stopped <- r.Stop(context.Background()) }()
		synctest.Wait() // Stop has deactivated the spout and waits
		close(gate)
		if err := <-stopped; err != nil {
			t.Fatalf("stop: %v", err)
		}
		a, _ := f.counts()
		if emitted := r.Stats().Components["feed"].Emitted; emitted != 1 || a != 1 {
			t.Fatalf("stop returned with %d acked of %d emitted; want 1 of 1", a, emitted)
		}
	})
}

// gatedSpout is a feedSpout whose first NextTuple waits until gate closes.
type gatedSpout struct {
	feedSpout
	gate chan struct{}
}

func (s *gatedSpout) NextTuple() {
	if s.gate != nil {
		<-s.gate
		s.gate = nil
	}
	s.feedSpout.NextTuple()
}

func TestStopReportsUndrainedTrees(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFeed()
		b := NewBuilder()
		b.Spout("feed", f.newSpout).Output("v")
		b.Bolt("never", boltFunc(hold).newBolt).Input("feed", Shuffle())
		r := submit(t, mustBuild(t, b), DefaultConfig())
		f.add(1, "x")
		settle()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		err := r.Stop(ctx)
		if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "1 trees pending") {
			t.Fatalf("stop = %v; want a deadline error naming 1 pending tree", err)
		}
	})
}
