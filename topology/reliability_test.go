package topology

import (
	"testing"
	"testing/synctest"
	"time"
)

// settle lets idle spouts poll their sources again (they wait
// SpoutIdleWait between empty rounds) and waits until every goroutine of
// the bubble is blocked.
func settle() {
	time.Sleep(10 * time.Millisecond)
	synctest.Wait()
}

// expectCounts checks a feed's acked and failed message counts.
func expectCounts(t *testing.T, f *feed, acked, failed int) {
	t.Helper()
	a, fl := f.counts()
	if a != acked || fl != failed {
		t.Fatalf("acked %d, failed %d; want acked %d, failed %d", a, fl, acked, failed)
	}
}

// ackEveryOther acks the first, third, fifth ... tuple it receives and
// drops the others without acking or failing them.
func ackEveryOther() boltFunc {
	n := 0
	return func(out *OutputCollector, t *Tuple) {
		n++
		if n%2 == 1 {
			out.Ack(t)
		}
	}
}

func TestTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFeed()
		b := NewBuilder()
		b.Spout("feed", f.newSpout).Output("n")
		b.Bolt("every-other", ackEveryOther().newBolt).Input("feed", Global())
		cfg := DefaultConfig()
		cfg.MessageTimeout = 10 * time.Second
		r := submit(t, mustBuild(t, b), cfg)
		f.add(1, 1)
		f.add(2, 2)
		f.add(3, 3)
		settle()
		if f.ackCount(1) != 1 || f.ackCount(3) != 1 || f.ackCount(2) != 0 {
			t.Fatalf("acks: 1=%d 2=%d 3=%d; want 1, 0, 1", f.ackCount(1), f.ackCount(2), f.ackCount(3))
		}
		time.Sleep(9 * time.Second)
		settle()
		if f.failCount(2) != 0 {
			t.Fatal("tuple 2 failed before the message timeout")
		}
		time.Sleep(12 * time.Second)
		settle()
		if f.failCount(2) != 1 {
			t.Fatalf("tuple 2 failed %d times two timeouts later; want 1", f.failCount(2))
		}
		expectCounts(t, f, 2, 1)
		if got := r.Stats().Components["feed"].TimedOut; got != 1 {
			t.Fatalf("feed TimedOut = %d, want 1", got)
		}
		stop(t, r)
	})
}

// keepAlive holds tracked tuples. On every untracked "ping" it resets the
// timeout of the tuples whose value is "keep"; on "release" it acks all.
func keepAlive() boltFunc {
	var held []*Tuple
	return func(out *OutputCollector, t *Tuple) {
		switch t.Value(0) {
		case "ping":
			for _, h := range held {
				if h.Value(0) == "keep" {
					out.ResetTimeout(h)
				}
			}
			out.Ack(t)
		case "release":
			for _, h := range held {
				out.Ack(h)
			}
			held = nil
			out.Ack(t)
		default:
			held = append(held, t)
		}
	}
}

func TestResetTimeoutKeepsTreeAlive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFeed()
		b := NewBuilder()
		b.Spout("feed", f.newSpout).Output("v")
		b.Bolt("keep", keepAlive().newBolt).Input("feed", Global())
		cfg := DefaultConfig()
		cfg.MessageTimeout = 10 * time.Second
		r := submit(t, mustBuild(t, b), cfg)
		f.add("kept", "keep")
		f.add("dropped", "drop")
		for range 6 { // 30 seconds, three timeouts
			time.Sleep(5 * time.Second)
			f.add(nil, "ping")
			settle()
		}
		if f.failCount("dropped") != 1 {
			t.Fatalf("the tree without resets failed %d times; want 1", f.failCount("dropped"))
		}
		if f.failCount("kept") != 0 || f.ackCount("kept") != 0 {
			t.Fatal("the tree with resets finished before it was released")
		}
		f.add(nil, "release")
		settle()
		if f.ackCount("kept") != 1 {
			t.Fatal("the kept tree was not acked after release")
		}
		stop(t, r)
	})
}

// splitTwo emits two copies of every input, anchored to it.
func splitTwo(out *OutputCollector, t *Tuple) {
	out.Emit(t.Values(), t)
	out.Emit(t.Values(), t)
	out.Ack(t)
}

// aggregate holds inputs until it has n, then emits one tuple anchored to
// all of them and acks them.
func aggregate(n int) boltFunc {
	var held []*Tuple
	return func(out *OutputCollector, t *Tuple) {
		held = append(held, t)
		if len(held) < n {
			return
		}
		out.Emit(Values{len(held)}, held...)
		for _, h := range held {
			out.Ack(h)
		}
		held = nil
	}
}

// TestAckBranchingFanIn is Storm's testAckBranching: each message branches
// in two, and an aggregator joins four tuples from two trees into one.
func TestAckBranchingFanIn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFeed()
		b := NewBuilder()
		b.Spout("feed", f.newSpout).Output("v")
		b.Bolt("split", boltFunc(splitTwo).newBolt).Output("v").Input("feed", Shuffle())
		b.Bolt("agg", aggregate(4).newBolt).Output("n").Input("split", Global())
		b.Bolt("sink", boltFunc(ackAll).newBolt).Input("agg", Global())
		r := submit(t, mustBuild(t, b), DefaultConfig())
		f.add(1, "a")
		settle()
		expectCounts(t, f, 0, 0)
		f.add(2, "b")
		settle()
		expectCounts(t, f, 2, 0)
		stop(t, r)
	})
}

// hold keeps data tuples until a tuple from the "control" component
// arrives, then acks them all.
func hold(out *OutputCollector, t *Tuple) {}

func holdUntilControl() boltFunc {
	var held []*Tuple
	return func(out *OutputCollector, t *Tuple) {
		if t.SourceComponent() != "control" {
			held = append(held, t)
			return
		}
		for _, h := range held {
			out.Ack(h)
		}
		held = nil
		out.Ack(t)
	}
}

// TestAckWaitsForWholeTree: a tree with a fast branch and a slow branch
// several hops deep is acked only when the slow branch is done too.
func TestAckWaitsForWholeTree(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, control := newFeed(), newFeed()
		b := NewBuilder()
		b.Spout("feed", f.newSpout).Output("v")
		b.Spout("control", control.newSpout).Output("v")
		b.Bolt("fast", boltFunc(ackAll).newBolt).Input("feed", Shuffle())
		b.Bolt("hop1", boltFunc(identity).newBolt).Output("v").Input("feed", Shuffle())
		b.Bolt("hop2", boltFunc(identity).newBolt).Output("v").Input("hop1", Shuffle())
		b.Bolt("slow", holdUntilControl().newBolt).Input("hop2", Shuffle()).Input("control", All())
		r := submit(t, mustBuild(t, b), DefaultConfig())
		f.add(1, "x")
		f.add(2, "y")
		settle()
		expectCounts(t, f, 0, 0)
		control.add(nil, "release")
		settle()
		expectCounts(t, f, 2, 0)
		stop(t, r)
	})
}

// TestMultiAnchorDiamond: each tuple goes two ways and is joined again by
// a bolt that anchors its output to both halves; the trees stay pending
// while the joined tuples are held, and complete once they are acked.
func TestMultiAnchorDiamond(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, control := newFeed(), newFeed()
		b := NewBuilder()
		b.Spout("feed", f.newSpout).Output("v")
		b.Spout("control", control.newSpout).Output("v")
		b.Bolt("left", boltFunc(identity).newBolt).Output("v").Input("feed", Shuffle())
		b.Bolt("right", boltFunc(identity).newBolt).Output("v").Input("feed", Shuffle())
		b.Bolt("join", aggregate(2).newBolt).Output("n").Input("left", Global()).Input("right", Global())
		b.Bolt("sink", holdUntilControl().newBolt).Input("join", Global()).Input("control", All())
		r := submit(t, mustBuild(t, b), DefaultConfig())
		f.add(1, "x")
		settle()
		expectCounts(t, f, 0, 0)
		control.add(nil, "release")
		settle()
		expectCounts(t, f, 1, 0)
		stop(t, r)
	})
}

func TestSelfAnchor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFeed()
		b := NewBuilder()
		b.Spout("feed", f.newSpout).Output("v")
		b.Bolt("dup", boltFunc(func(out *OutputCollector, t *Tuple) {
			out.Emit(t.Values(), t, t)
			out.Ack(t)
		}).newBolt).Output("v").Input("feed", Shuffle())
		b.Bolt("sink", boltFunc(ackAll).newBolt).Input("dup", Shuffle())
		r := submit(t, mustBuild(t, b), DefaultConfig())
		f.add(1, "x")
		settle()
		expectCounts(t, f, 1, 0)
		stop(t, r)
	})
}

func TestFailedTupleFailsTree(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFeed()
		b := NewBuilder()
		b.Spout("feed", f.newSpout).Output("v")
		b.Bolt("split", boltFunc(splitTwo).newBolt).Output("v").Input("feed", Shuffle())
		n := 0
		b.Bolt("picky", boltFunc(func(out *OutputCollector, t *Tuple) {
			n++
			if n == 2 {
				out.Fail(t)
				return
			}
			out.Ack(t)
		}).newBolt).Input("split", Global())
		r := submit(t, mustBuild(t, b), DefaultConfig())
		f.add(1, "x")
		f.add(2, "y")
		settle()
		if f.failCount(1) != 1 || f.ackCount(2) != 1 {
			t.Fatalf("message 1 failed %d times, message 2 acked %d times; want 1 and 1", f.failCount(1), f.ackCount(2))
		}
		if got := r.Stats().Components["picky"].Failed; got != 1 {
			t.Fatalf("picky Failed = %d, want 1", got)
		}
		stop(t, r)
	})
}

func TestAckersZeroAcksAtEmit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFeed()
		b := NewBuilder()
		b.Spout("feed", f.newSpout).Output("v")
		b.Bolt("failer", boltFunc(func(out *OutputCollector, t *Tuple) { out.Fail(t) }).newBolt).Input("feed", Shuffle())
		cfg := DefaultConfig()
		cfg.Ackers = 0
		cfg.MaxSpoutPending = 1 // no effect without ackers
		r := submit(t, mustBuild(t, b), cfg)
		for i := range 5 {
			f.add(i, i)
		}
		settle()
		expectCounts(t, f, 5, 0)
		if _, ok := r.Stats().Components[ackerComponent]; ok {
			t.Fatal("an acker ran with Ackers = 0")
		}
		stop(t, r)
	})
}

func TestNoMessageIDIsNotTracked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFeed()
		f.noMsgID = true
		b := NewBuilder()
		b.Spout("feed", f.newSpout).Output("v")
		b.Bolt("failer", boltFunc(func(out *OutputCollector, t *Tuple) {
			if t.Tracked() {
				panic("untracked spout tuple arrived tracked")
			}
			out.Fail(t)
		}).newBolt).Input("feed", Shuffle())
		r := submit(t, mustBuild(t, b), DefaultConfig())
		for i := range 5 {
			f.add(i, i)
		}
		settle()
		time.Sleep(time.Minute + time.Second)
		settle()
		expectCounts(t, f, 0, 0)
		if s := r.Stats().Components["feed"]; s.Emitted != 5 {
			t.Fatalf("feed emitted %d, want 5", s.Emitted)
		}
		if h := r.Health(); h.Crashes != 0 {
			t.Fatalf("crashed: %v", h.LastCrash)
		}
		stop(t, r)
	})
}

func TestUnanchoredBoltEmitIsNotTracked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFeed()
		b := NewBuilder()
		b.Spout("feed", f.newSpout).Output("v")
		b.Bolt("unanchored", boltFunc(func(out *OutputCollector, t *Tuple) {
			out.Emit(t.Values())
			out.Ack(t)
		}).newBolt).Output("v").Input("feed", Shuffle())
		b.Bolt("never-acks", boltFunc(hold).newBolt).Input("unanchored", Shuffle())
		r := submit(t, mustBuild(t, b), DefaultConfig())
		f.add(1, "x")
		settle()
		expectCounts(t, f, 1, 0)
		stop(t, r)
	})
}

func TestMaxSpoutPendingHoldsBackSpout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, control := newFeed(), newFeed()
		b := NewBuilder()
		b.Spout("feed", f.newSpout).Output("v")
		b.Spout("control", control.newSpout).Output("v")
		b.Bolt("slow", holdUntilControl().newBolt).Input("feed", Shuffle()).Input("control", All())
		cfg := DefaultConfig()
		cfg.MaxSpoutPending = 3
		r := submit(t, mustBuild(t, b), cfg)
		for i := range 10 {
			f.add(i, i)
		}
		settle()
		if got := r.Stats().Components["feed"].Emitted; got != 3 {
			t.Fatalf("spout emitted %d with 3 pending allowed", got)
		}
		control.add(nil, "release")
		settle()
		if got := r.Stats().Components["feed"].Emitted; got != 6 {
			t.Fatalf("spout emitted %d after one release, want 6", got)
		}
		expectCounts(t, f, 3, 0)
		for range 2 {
			control.add(nil, "release")
			settle()
		}
		expectCounts(t, f, 9, 0)
		control.add(nil, "release")
		settle()
		expectCounts(t, f, 10, 0)
		stop(t, r)
	})
}

func TestStartInactiveEmitsAfterActivate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFeed()
		b := NewBuilder()
		b.Spout("feed", f.newSpout).Output("v")
		b.Bolt("sink", boltFunc(ackAll).newBolt).Input("feed", Shuffle())
		cfg := DefaultConfig()
		cfg.StartInactive = true
		r := submit(t, mustBuild(t, b), cfg)
		f.add(1, "x")
		time.Sleep(time.Second)
		settle()
		expectCounts(t, f, 0, 0)
		r.Activate()
		time.Sleep(10 * time.Millisecond)
		settle()
		expectCounts(t, f, 1, 0)
		r.Deactivate()
		time.Sleep(10 * time.Millisecond)
		f.add(2, "y")
		time.Sleep(time.Second)
		settle()
		expectCounts(t, f, 1, 0)
		stop(t, r)
	})
}
