package topology

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// holdBolt holds every tuple until a "release" arrives, then acks them
// all. Each instance holds its own: a worker that dies loses them.
type holdBolt struct {
	out      *OutputCollector
	held     []*Tuple
	executed *atomic.Int64
}

func (b *holdBolt) Prepare(_ context.Context, _ TaskInfo, out *OutputCollector) error {
	b.out = out
	return nil
}

func (b *holdBolt) Execute(t *Tuple) {
	b.executed.Add(1)
	if t.Value(0) != "release" {
		b.held = append(b.held, t)
		return
	}
	for _, h := range b.held {
		b.out.Ack(h)
	}
	b.held = nil
	b.out.Ack(t)
}

func (b *holdBolt) Cleanup() error { return nil }

// holdWorkers runs feed (and the acker) in worker a and a holdBolt in
// worker b over an in-memory network, with a message timeout far longer
// than the tests wait, so that only a peer loss can fail a tree. Every
// connection a dials is recorded in conns.
func holdWorkers(t *testing.T, f *feed, executed *atomic.Int64, conns *dialed) *workers {
	b := NewBuilder()
	b.Spout("feed", f.newSpout).Output("v")
	b.Bolt("hold", func() Bolt { return &holdBolt{executed: executed} }).Input("feed", Global())
	cfg := DefaultConfig()
	cfg.MessageTimeout = time.Hour
	cfg.SpoutIdleWait = 20 * time.Millisecond
	mem := newMemNet()
	ws := newWorkers(t, mustBuild(t, b), cfg, mem, map[string]WorkerID{"feed": "a", ackerComponent: "a", "hold": "b"})
	ws.tune = func(w WorkerID, spec *WorkerSpec) {
		if w == "a" {
			spec.Client.Dial = conns.dial(mem.dial)
		}
	}
	return ws
}

// dialed records the connections a worker dialed.
type dialed struct {
	mu    sync.Mutex
	conns []net.Conn
}

func (d *dialed) dial(next func(context.Context, string) (net.Conn, error)) func(context.Context, string) (net.Conn, error) {
	return func(ctx context.Context, addr string) (net.Conn, error) {
		c, err := next(ctx, addr)
		if err == nil {
			d.mu.Lock()
			d.conns = append(d.conns, c)
			d.mu.Unlock()
		}
		return c, err
	}
}

func (d *dialed) last() net.Conn {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.conns[len(d.conns)-1]
}

// TestPeerRestartFailsPendingTreesAtOnce: worker b holds two trees of a's
// spout and dies; its supervisor restarts it in place 2s later. Worker a
// reconnects to a new incarnation of b and fails both trees at once
// instead of waiting out the message timeout (an hour here); a tree
// emitted after the restart is not failed, and completes.
func TestPeerRestartFailsPendingTreesAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFeed()
		var executed atomic.Int64
		ws := holdWorkers(t, f, &executed, &dialed{})
		ws.startAll()
		f.add("held-1", "x")
		f.add("held-2", "x")
		waitUntil(t, 10*time.Second, "b holds both trees", func() bool { return executed.Load() == 2 })

		ws.kill("b")
		time.Sleep(2 * time.Second) // the supervisor's restart
		if n := f.failCount("held-1") + f.failCount("held-2"); n != 0 {
			t.Fatalf("%d trees failed before b came back", n)
		}
		restarted := time.Now()
		ws.start("b")
		waitUntil(t, 10*time.Second, "both trees failed", func() bool {
			return f.failCount("held-1") == 1 && f.failCount("held-2") == 1
		})
		if d := time.Since(restarted); d > 2*time.Second {
			t.Fatalf("the trees failed %v after b restarted", d)
		}
		a := ws.running["a"]
		if pl := a.PeerLosses(); pl != (PeerLossStats{Losses: 1, TreesFailed: 2}) {
			t.Fatalf("peer losses %+v, want 1 loss and 2 trees failed", pl)
		}
		if st := a.Stats().Components["feed"]; st.Failed != 2 || st.TimedOut != 0 {
			t.Fatalf("spout stats %+v: want 2 failed, none timed out", st)
		}
		if ps := a.PeerStats()["b"]; ps.Restarts != 1 {
			t.Fatalf("a -> b %+v: want 1 restart", ps)
		}

		f.add("after", "x")
		f.add(nil, "release")
		waitUntil(t, 10*time.Second, "the tree emitted after the restart acked", func() bool { return f.ackCount("after") == 1 })
		if f.failCount("after") != 0 || a.PeerLosses().TreesFailed != 2 {
			t.Fatalf("the tree emitted after the restart failed %d times; losses %+v", f.failCount("after"), a.PeerLosses())
		}
		ws.stopAll()
	})
}

// TestConnectionBlipFailsNothing: the connection from a to b breaks while
// b holds two trees, and b's process survives. a reconnects to the same
// incarnation with nothing lost, fails no tree, and the trees complete
// when b releases them.
func TestConnectionBlipFailsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFeed()
		var executed atomic.Int64
		conns := &dialed{}
		ws := holdWorkers(t, f, &executed, conns)
		ws.startAll()
		f.add("held-1", "x")
		f.add("held-2", "x")
		waitUntil(t, 10*time.Second, "b holds both trees", func() bool { return executed.Load() == 2 })

		a := ws.running["a"]
		conns.last().Close()
		waitUntil(t, 10*time.Second, "a reconnected to b", func() bool { return a.PeerStats()["b"].Connects == 2 })
		settle()
		if pl := a.PeerLosses(); pl != (PeerLossStats{}) || f.failCount("held-1")+f.failCount("held-2") != 0 {
			t.Fatalf("after a blip: losses %+v, %d trees failed", pl, f.failCount("held-1")+f.failCount("held-2"))
		}

		f.add(nil, "release")
		waitUntil(t, 10*time.Second, "both trees acked", func() bool {
			return f.ackCount("held-1") == 1 && f.ackCount("held-2") == 1
		})
		if _, failed := f.counts(); failed != 0 || a.PeerStats()["b"].Restarts != 0 {
			t.Fatalf("%d trees failed, a -> b %+v", failed, a.PeerStats()["b"])
		}
		ws.stopAll()
	})
}
