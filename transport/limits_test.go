package transport

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// memServer starts a server on mem at "srv" with cfg's changes, its log
// kept in logs.
func memServer(t *testing.T, mem *memNet, h Handler, logs *logRecords, change func(*ServerConfig)) *Server {
	cfg := serverConfig(h)
	cfg.Listener, cfg.Logger = mem.listen("srv"), slog.New(logs)
	if change != nil {
		change(&cfg)
	}
	return listen(t, cfg)
}

// memDial opens a raw connection to "srv" on mem.
func memDial(t *testing.T, mem *memNet) net.Conn {
	conn, err := mem.dial(context.Background(), "srv")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// closedByPeer reports whether the peer closed conn (a read ends without
// a deadline passing); it waits at most ten virtual minutes.
func closedByPeer(conn net.Conn) bool {
	conn.SetReadDeadline(time.Now().Add(10 * time.Minute))
	var b [64]byte
	for {
		_, err := conn.Read(b[:])
		if err != nil {
			return !isTimeout(err)
		}
	}
}

func TestConnectionCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem, logs := newMemNet(), &logRecords{}
		srv := memServer(t, mem, newRecorder(), logs, func(c *ServerConfig) { c.MaxConns = 2 })
		a, b := memDial(t, mem), memDial(t, mem)
		c := memDial(t, mem)
		if !closedByPeer(c) {
			t.Fatal("a third connection was kept open with MaxConns 2")
		}
		synctest.Wait()
		if st := srv.Stats(); st.RefusedByReason()[ReasonConnCap] != 1 || st.Refused != 1 {
			t.Fatalf("stats %+v %v", st, st.RefusedByReason())
		}
		if r := logs.refusals(); len(r) != 1 || r[0]["reason"] != ReasonConnCap || r[0]["remote"] == "" {
			t.Fatalf("logged %v", r)
		}
		// Closing one of the two makes room for another.
		a.Close()
		synctest.Wait()
		d := memDial(t, mem)
		if _, err := clientHandshake(d, &ClientConfig{Topology: testTopology, Worker: "d", Peer: serverWorker}); err != nil {
			t.Fatalf("a connection after one closed: %v", err)
		}
		b.Close()
		d.Close()
		srv.Close()
		if st := srv.Stats(); st.RefusedByReason()[ReasonConnCap] != 1 {
			t.Fatalf("stats %v", st.RefusedByReason())
		}
	})
}

func TestHandshakeTimeout(t *testing.T) {
	for _, tlsOn := range []bool{false, true} {
		name := "plain"
		if tlsOn {
			name = "TLS"
		}
		t.Run(name, func(t *testing.T) {
			var ca *testCA
			if tlsOn {
				ca = newTestCA(t, "cluster CA")
			}
			synctest.Test(t, func(t *testing.T) {
				mem, logs := newMemNet(), &logRecords{}
				srv := memServer(t, mem, newRecorder(), logs, func(c *ServerConfig) {
					if ca != nil {
						c.TLS = ca.serverTLS(ca.issue(t, "topo/e1/w-server"))
					}
				})
				conn := memDial(t, mem)
				start := time.Now()
				conn.Write([]byte(magic)) // a start, then silence
				if !closedByPeer(conn) {
					t.Fatal("a silent peer was kept")
				}
				if d := time.Since(start); d != DefaultHandshakeTimeout {
					t.Fatalf("closed after %v, want the handshake timeout %v", d, DefaultHandshakeTimeout)
				}
				synctest.Wait()
				if st := srv.Stats(); st.RefusedByReason()[ReasonHandshakeTimeout] != 1 || st.Refused != 1 {
					t.Fatalf("stats %+v %v", st, st.RefusedByReason())
				}
				srv.Close()
			})
		})
	}
}

func TestIdleTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem, logs := newMemNet(), &logRecords{}
		srv := memServer(t, mem, newRecorder(), logs, nil)
		conn := memDial(t, mem)
		if _, err := clientHandshake(conn, &ClientConfig{Topology: testTopology, Worker: "quiet", Peer: serverWorker}); err != nil {
			t.Fatal(err)
		}
		frame, err := appendFrame(newEncoder(nil), nil, []Message{tuple(1, 0)})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(DefaultIdleTimeout - time.Second)
		conn.Write(frame) // a frame restarts the timeout
		start := time.Now()
		if !closedByPeer(conn) {
			t.Fatal("an idle peer was kept")
		}
		if d := time.Since(start); d != DefaultIdleTimeout {
			t.Fatalf("closed %v after the last frame, want %v", d, DefaultIdleTimeout)
		}
		synctest.Wait()
		st := srv.Stats()
		if st.RefusedByReason()[ReasonIdle] != 1 || st.Frames != 1 || st.Refused != 0 || st.BadFrames != 0 {
			t.Fatalf("stats %+v %v", st, st.RefusedByReason())
		}
		if r := logs.refusals(); len(r) != 1 || r[0]["reason"] != ReasonIdle || r[0]["peer"] != "quiet" {
			t.Fatalf("logged %v", r)
		}
		srv.Close()
	})
}

// TestHeartbeatsKeepAnIdleClientConnected: a client that has nothing to
// send writes heartbeats, so its connection outlives many idle timeouts.
func TestHeartbeatsKeepAnIdleClientConnected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem, logs := newMemNet(), &logRecords{}
		rec := newRecorder()
		srv := memServer(t, mem, rec, logs, nil)
		ccfg := clientConfig("srv")
		ccfg.Dial = mem.dial
		cli := dial(t, ccfg)
		sendRange(t, cli, 1, 0, 1)
		time.Sleep(10 * DefaultIdleTimeout)
		sendRange(t, cli, 1, 1, 2)
		synctest.Wait()
		st, cs := srv.Stats(), cli.Stats()
		if rec.count() != 2 || cs.Connects != 1 || st.RefusedByReason()[ReasonIdle] != 0 {
			t.Fatalf("client %+v server %+v %v", cs, st, st.RefusedByReason())
		}
		if want := uint64(10 * DefaultIdleTimeout / DefaultHeartbeat); cs.Heartbeats < want-1 || st.Heartbeats != cs.Heartbeats || st.Frames != 2 {
			t.Fatalf("%d heartbeats sent, %d received, want about %d; server frames %d", cs.Heartbeats, st.Heartbeats, want, st.Frames)
		}
		cli.Close()
		srv.Close()
	})
}

// panicky is a registered type whose decoder panics on a zero byte.
type panicky struct{ B byte }

func panickyTypes(t testing.TB) *Types {
	var ts Types
	err := Register(&ts, 30, func(b []byte, p panicky) ([]byte, error) { return append(b, p.B), nil },
		func(data []byte) (panicky, error) {
			if data[0] == 0 {
				panic("a decoder's bug")
			}
			return panicky{data[0]}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return &ts
}

// TestPanickingValueDecoder: a registered decoder that panics on a frame
// costs that frame and its connection, not the process; the panic is
// logged with its stack and counted.
func TestPanickingValueDecoder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem, logs := newMemNet(), &logRecords{}
		rec := newRecorder()
		types := panickyTypes(t)
		srv := memServer(t, mem, rec, logs, func(c *ServerConfig) { c.Types = types })
		ccfg := clientConfig("srv")
		ccfg.Dial, ccfg.Types = mem.dial, types
		cli := dial(t, ccfg)
		send := func(b byte) {
			t.Helper()
			err := cli.Send(context.Background(), Message{Kind: KindTuple, Task: 1, Stream: "s", Values: []any{panicky{b}}})
			if err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
		}
		send(1)
		send(0) // panics on the server
		if st := srv.Stats(); st.RefusedByReason()[ReasonPanic] != 1 || st.BadFrames != 1 || rec.count() != 1 {
			t.Fatalf("after the panic: %d delivered, stats %+v %v", rec.count(), st, st.RefusedByReason())
		}
		time.Sleep(time.Second) // the client reconnects
		send(2)
		if got := rec.messages(1); len(got) != 2 || got[1].Values[0] != (panicky{2}) {
			t.Fatalf("delivered %v", got)
		}
		if cli.Stats().Connects != 2 {
			t.Fatalf("client %+v", cli.Stats())
		}
		r := logs.refusals()
		if len(r) != 1 || r[0]["reason"] != ReasonPanic || !strings.Contains(r[0]["err"], "a decoder's bug") ||
			!strings.Contains(r[0]["stack"], "panickyTypes") {
			t.Fatalf("logged %v", r)
		}
		cli.Close()
		srv.Close()
	})
}

func TestDecoderPanicIsAFrameError(t *testing.T) {
	types := panickyTypes(t)
	frame, err := appendFrame(newEncoder(types), nil, []Message{{Kind: KindTuple, Task: 1, Values: []any{panicky{0}}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = newDecoder(types).frame(frame[lenPrefix:], nil)
	var fe *FrameError
	var vp *valuePanic
	if !errors.As(err, &fe) || !errors.Is(err, ErrValuePanic) || errors.Is(err, ErrBadFrame) || !errors.As(err, &vp) {
		t.Fatalf("got %v", err)
	}
}

func TestDefaultLoggersAreVisible(t *testing.T) {
	if l := (ServerConfig{}).withDefaults().Logger; l != slog.Default() {
		t.Fatalf("the server's default logger is %v, not slog.Default()", l)
	}
	if l := (ClientConfig{}).withDefaults().Logger; l != slog.Default() {
		t.Fatalf("the client's default logger is %v, not slog.Default()", l)
	}
}

func TestReasonsAreCountedByName(t *testing.T) {
	want := []string{ReasonConnCap, ReasonTLS, ReasonPeer, ReasonHandshake, ReasonHandshakeTimeout,
		ReasonIdle, ReasonFrameSize, ReasonBudget, ReasonDecode, ReasonPanic}
	got := Reasons()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("Reasons() = %v", got)
	}
	var st ServerStats
	st.reasons[rBudget] = 3
	m := st.RefusedByReason()
	if len(m) != len(want) || m[ReasonBudget] != 3 || m[ReasonTLS] != 0 {
		t.Fatalf("RefusedByReason() = %v", m)
	}
}
