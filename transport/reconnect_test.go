package transport

import (
	"context"
	"net"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// waitClient waits until cond holds for the client's stats.
func waitClient(t testing.TB, c *Client, what string, cond func(ClientStats) bool) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		wait := c.progress.Wait()
		if cond(c.Stats()) {
			return
		}
		select {
		case <-wait:
		case <-deadline:
			t.Fatalf("waiting for %s: stats %+v, last error %v", what, c.Stats(), c.Err())
		}
	}
}

func sendRange(t testing.TB, c *Client, task TaskID, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		if err := c.Send(context.Background(), tuple(task, i)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReconnectAfterServerRestart(t *testing.T) {
	rec := newRecorder()
	srv := listen(t, serverConfig(rec))
	addr := srv.Addr().String()
	cli := dial(t, clientConfig(addr))
	sendRange(t, cli, 1, 0, 100)
	rec.waitFor(t, 100)

	srv.Close()
	// A connection accepted while the server was closing may have been
	// taken and dropped; two failed attempts after Close mean the client
	// sees the server down.
	f0 := cli.Stats().ConnectFailures
	waitClient(t, cli, "failed attempts", func(st ClientStats) bool { return st.ConnectFailures >= f0+2 })
	sendRange(t, cli, 1, 100, 200) // queued while the server is down

	scfg := serverConfig(rec)
	scfg.Addr = addr
	listen(t, scfg)
	sendRange(t, cli, 1, 200, 300)
	rec.waitFor(t, 300)
	for i, m := range rec.messages(1) {
		if m.Values[1] != i {
			t.Fatalf("message %d carries %v", i, m.Values[1])
		}
	}
	if err := cli.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := cli.Stats(); st.Connects < 2 || st.Lost != 0 || st.Sent != 300 {
		t.Fatalf("stats %+v", st)
	}
}

// TestLostInFlightAreCountedNotResent breaks the connection under a
// write: the messages of that write are counted as Lost and are not sent
// again; the client reconnects and later messages arrive.
func TestLostInFlightAreCountedNotResent(t *testing.T) {
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
		rec := newRecorder()
		scfg := serverConfig(rec)
		scfg.Listener = mn.listen("server")
		srv, err := Listen(t.Context(), scfg)
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		cfg := clientConfig("server")
		cfg.Dial = mn.dial
		cli, err := NewClient(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer cli.Close()

		sendRange(t, cli, 1, 0, 10)
		rec.waitFor(t, 10)
		mu.Lock()
		conns[0].breakNow()
		mu.Unlock()
		if err := cli.Send(t.Context(), tuple(1, 10), tuple(1, 11), tuple(1, 12)); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if st := cli.Stats(); st.Lost != 3 || st.Connects != 2 {
			t.Fatalf("after a broken write: stats %+v", st)
		}
		sendRange(t, cli, 1, 13, 20)
		rec.waitFor(t, 17)
		synctest.Wait()
		var got []any
		for _, m := range rec.messages(1) {
			got = append(got, m.Values[1])
		}
		if len(got) != 17 || got[9] != 9 || got[10] != 13 {
			t.Fatalf("delivered %v: want 0..9 then 13..19, the lost ones not resent", got)
		}
	})
}

// TestBackoffInVirtualTime: with no server, attempts follow the jittered
// exponential backoff; once a server appears the client connects within
// MaxBackoff and what was queued meanwhile arrives.
func TestBackoffInVirtualTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mn := newMemNet()
		cfg := clientConfig("server")
		cfg.Dial, cfg.MinBackoff, cfg.MaxBackoff = mn.dial, 100*time.Millisecond, time.Second
		cli, err := NewClient(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer cli.Close()
		sendRange(t, cli, 3, 0, 5)

		time.Sleep(10 * time.Second)
		// Delays are drawn from [d/2, d] for d = 100ms, 200ms, 400ms,
		// 800ms, then 1s: between 12 and 24 attempts fit in 10s.
		if n := cli.Stats().ConnectFailures; n < 12 || n > 24 {
			t.Fatalf("%d failed attempts in 10s", n)
		}

		rec := newRecorder()
		scfg := serverConfig(rec)
		scfg.Listener = mn.listen("server")
		srv, err := Listen(t.Context(), scfg)
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		start := time.Now()
		waitClient(t, cli, "a connection", func(st ClientStats) bool { return st.Connects == 1 })
		if waited := time.Since(start); waited > cfg.MaxBackoff {
			t.Fatalf("connected %v after the server appeared, MaxBackoff %v", waited, cfg.MaxBackoff)
		}
		rec.waitFor(t, 5)

		// A connection that worked resets the backoff: after the server
		// goes away, the client retries at once, then within MinBackoff,
		// not after the long delays of the first outage.
		srv.Close()
		synctest.Wait()
		failed := cli.Stats().ConnectFailures
		time.Sleep(cfg.MinBackoff)
		synctest.Wait()
		if n := cli.Stats().ConnectFailures; n < failed+1 {
			t.Fatalf("%d failed attempts in MinBackoff after a good connection, want another", n-failed)
		}
	})
}
