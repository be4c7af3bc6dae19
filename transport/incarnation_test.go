package transport

import (
	"net"
	"regexp"
	"sync"
	"testing"
	"testing/synctest"
)

// reconnects records what a client's Reconnected hook was told.
type reconnects struct {
	mu  sync.Mutex
	got []Reconnect
}

func (r *reconnects) add(rc Reconnect) {
	r.mu.Lock()
	r.got = append(r.got, rc)
	r.mu.Unlock()
}

func (r *reconnects) all() []Reconnect {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Reconnect(nil), r.got...)
}

// TestReconnectTellsARestartFromABlip: a client that reconnects to the
// same server (a connection that broke, its process alive) is told so,
// with the messages a failed write lost; one that reconnects to a new
// server at the same address is told the peer restarted.
func TestReconnectTellsARestartFromABlip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mn := newMemNet()
		var mu sync.Mutex
		var conns []*faultConn
		mn.faults = func(c net.Conn) net.Conn {
			f := &faultConn{Conn: c}
			mu.Lock()
			conns = append(conns, f)
			mu.Unlock()
			return f
		}
		lastConn := func() *faultConn {
			mu.Lock()
			defer mu.Unlock()
			return conns[len(conns)-1]
		}
		rec := newRecorder()
		scfg := serverConfig(rec)
		scfg.Listener, scfg.Incarnation = mn.listen("server"), "first"
		srv, err := Listen(t.Context(), scfg)
		if err != nil {
			t.Fatal(err)
		}
		var hook reconnects
		cfg := clientConfig("server")
		cfg.Dial, cfg.Reconnected = mn.dial, hook.add
		cli, err := NewClient(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer cli.Close()
		sendRange(t, cli, 1, 0, 10)
		rec.waitFor(t, 10)
		synctest.Wait()
		if got := hook.all(); len(got) != 0 {
			t.Fatalf("the first connection was reported as a reconnect: %+v", got)
		}

		// A blip: the connection closes under an idle client; the server
		// lives on. Nothing was lost that the client knows of.
		lastConn().Conn.Close()
		synctest.Wait()
		got := hook.all()
		if len(got) != 1 || got[0] != (Reconnect{Peer: serverWorker, Previous: "first", Incarnation: "first"}) || got[0].Lossy() {
			t.Fatalf("after a blip: %+v", got)
		}

		// A blip under a write: the write's messages are lost (how many
		// depends on how the client batched the three into writes).
		lastConn().breakNow()
		sendRange(t, cli, 1, 10, 13)
		synctest.Wait()
		got = hook.all()
		if len(got) != 2 || got[1].Restarted() || got[1].Lost < 1 || got[1].Lost > 3 || !got[1].Lossy() {
			t.Fatalf("after a broken write: %+v", got)
		}

		// The server restarts at the same address: a new incarnation. The
		// client sees the old connection end before it sends again.
		srv.Close()
		synctest.Wait()
		scfg.Listener, scfg.Incarnation = mn.listen("server"), "second"
		srv, err = Listen(t.Context(), scfg)
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		synctest.Wait()
		delivered := rec.count()
		sendRange(t, cli, 1, 13, 15)
		rec.waitFor(t, delivered+2)
		synctest.Wait()
		got = hook.all()
		if len(got) != 3 || !got[2].Restarted() || got[2].Previous != "first" || got[2].Incarnation != "second" || got[2].Lost != 0 {
			t.Fatalf("after a restart: %+v", got)
		}
		if st := cli.Stats(); st.Restarts != 1 || st.Connects != 4 {
			t.Fatalf("stats %+v: want 1 restart in 4 connections", st)
		}
	})
}

// TestIncarnationsAreDrawnPerServer: a server without an Incarnation
// draws its own, and two servers never announce the same.
func TestIncarnationsAreDrawnPerServer(t *testing.T) {
	a := listen(t, serverConfig(newRecorder()))
	b := listen(t, serverConfig(newRecorder()))
	hex16 := regexp.MustCompile(`^[0-9a-f]{16}$`)
	if !hex16.MatchString(a.Incarnation()) || a.Incarnation() == b.Incarnation() {
		t.Fatalf("incarnations %q and %q", a.Incarnation(), b.Incarnation())
	}
	if (Reconnect{Incarnation: "x"}).Restarted() != true {
		t.Fatal("a previous connection without an incarnation must count as a restart")
	}
	cfg := serverConfig(newRecorder())
	cfg.Incarnation = string(make([]byte, maxIDBytes+1))
	if err := cfg.Validate(); err == nil {
		t.Fatal("an incarnation over maxIDBytes was accepted")
	}
}
