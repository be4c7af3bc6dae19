package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"strings"
	"testing"
)

// tlsServer starts a mutual-TLS server on 127.0.0.1 whose certificate ca
// signed for "topo/e1/w-server", accepting peers of "topo/e1/" only, with
// its log kept in logs.
func tlsServer(t testing.TB, ca *testCA, h Handler, logs *logRecords) *Server {
	cfg := serverConfig(h)
	cfg.TLS = ca.serverTLS(ca.issue(t, "topo/e1/"+serverWorker))
	cfg.VerifyPeer = peerNamed("topo/e1/")
	cfg.Logger = slog.New(logs)
	return listen(t, cfg)
}

func TestMutualTLS(t *testing.T) {
	ca, other := newTestCA(t, "cluster CA"), newTestCA(t, "another CA")
	rec, logs := newRecorder(), &logRecords{}
	srv := tlsServer(t, ca, rec, logs)
	addr := srv.Addr().String()

	good := ca.issue(t, "topo/e1/"+clientWorker)
	cfg := clientConfig(addr)
	cfg.TLS, cfg.VerifyPeer = ca.clientTLS(&good), peerNamed("topo/e1/")
	cli := dial(t, cfg)
	sendRange(t, cli, 1, 0, 100)
	rec.waitFor(t, 100)
	if st := srv.Stats(); st.Refused != 0 || st.Active != 1 {
		t.Fatalf("a worker with the right certificate: %+v %v", st, st.RefusedByReason())
	}

	stranger, oldEpoch := other.issue(t, "topo/e1/w-x"), ca.issue(t, "topo/e0/w-x")
	cases := []struct {
		name   string
		tls    *tls.Config
		reason string
	}{
		{"no client certificate", ca.clientTLS(nil), ReasonTLS},
		{"certificate of another CA", ca.clientTLS(&stranger), ReasonTLS},
		{"refused by VerifyPeer", ca.clientTLS(&oldEpoch), ReasonPeer},
		{"plaintext", nil, ReasonTLS},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := srv.RefusedByReason()[c.reason]
			cfg := clientConfig(addr)
			cfg.TLS = c.tls
			cli := dial(t, cfg)
			sendRange(t, cli, 2, 0, 10)
			waitServer(t, srv, func(st ServerStats) bool { return st.RefusedByReason()[c.reason] > before })
			t.Logf("the client sees: %v", waitErr(t, cli))
			cli.Close()
			if n := rec.count(); n != 100 {
				t.Fatalf("%d messages delivered; only the 100 of the good worker may be", n)
			}
			if st := cli.Stats(); st.Connects != 0 || st.Sent != 0 {
				t.Fatalf("a refused peer connected: %+v", st)
			}
		})
	}
	// Every refusal was logged with the remote address and the reason.
	refusals := logs.refusals()
	if len(refusals) < len(cases) {
		t.Fatalf("%d refusals logged, want %d:\n%s", len(refusals), len(cases), logs.text())
	}
	for _, r := range refusals {
		if !strings.HasPrefix(r["remote"], "127.0.0.1:") || (r["reason"] != ReasonTLS && r["reason"] != ReasonPeer) || r["err"] == "" {
			t.Fatalf("refusal logged as %v", r)
		}
	}
	if got := rec.messages(2); len(got) != 0 {
		t.Fatalf("task 2 got %d messages from refused peers", len(got))
	}
}

func TestClientVerifiesTheServer(t *testing.T) {
	ca := newTestCA(t, "cluster CA")
	srv := tlsServer(t, ca, newRecorder(), &logRecords{})
	cert := ca.issue(t, "topo/e1/"+clientWorker)
	cfg := clientConfig(srv.Addr().String())
	cfg.TLS, cfg.VerifyPeer = ca.clientTLS(&cert), peerNamed("topo/e2/") // the server is of e1
	cli := dial(t, cfg)
	err := waitErr(t, cli)
	if !errors.Is(err, ErrHandshake) || !strings.Contains(err.Error(), "VerifyPeer") {
		t.Fatalf("got %v, want the client's VerifyPeer refusal", err)
	}
	if st := cli.Stats(); st.Connects != 0 {
		t.Fatalf("connected to a server VerifyPeer refused: %+v", st)
	}
}

// TestForgedAckFromUnverifiedPeer: a peer that VerifyPeer refuses (a
// certificate of the cluster's CA, but not of this topology's epoch), or
// that does not speak TLS, sends a well-formed handshake and an ack; the
// handler never sees it.
func TestForgedAckFromUnverifiedPeer(t *testing.T) {
	ca := newTestCA(t, "cluster CA")
	rec, logs := newRecorder(), &logRecords{}
	srv := tlsServer(t, ca, rec, logs)
	forged := Message{Kind: KindAck, Task: 0, Root: 42, XOR: 7}
	frame, err := appendFrame(newEncoder(nil), nil, []Message{forged})
	if err != nil {
		t.Fatal(err)
	}
	attack := func(t *testing.T, conn net.Conn) {
		t.Helper()
		// No reading in between: the handshake and the frame arrive
		// together, as fast as the attacker can send them.
		if err := writeHello(conn, helloWord, testTopology, "w-evil", serverWorker); err == nil {
			conn.Write(frame)
		}
		expectClosed(t, conn)
	}

	evil := ca.issue(t, "topo/e0/w-evil")
	conn, err := tls.Dial("tcp", srv.Addr().String(), ca.clientTLS(&evil))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	attack(t, conn)
	waitServer(t, srv, func(st ServerStats) bool { return st.RefusedByReason()[ReasonPeer] == 1 })

	attack(t, rawDial(t, srv)) // no TLS at all
	waitServer(t, srv, func(st ServerStats) bool { return st.RefusedByReason()[ReasonTLS] == 1 })

	// The same ack from a verified worker arrives: the handler would
	// have seen the forged one, had it got through.
	good := ca.issue(t, "topo/e1/"+clientWorker)
	cfg := clientConfig(srv.Addr().String())
	cfg.TLS = ca.clientTLS(&good)
	cli := dial(t, cfg)
	if err := cli.Send(context.Background(), Message{Kind: KindAck, Task: 1, Root: 43, XOR: 8}); err != nil {
		t.Fatal(err)
	}
	rec.waitFor(t, 1)
	if got := rec.messages(0); len(got) != 0 {
		t.Fatalf("the forged ack was delivered: %+v", got)
	}
	if st := srv.Stats(); st.Frames != 1 || st.Messages != 1 {
		t.Fatalf("frames of unverified peers were decoded: %+v", st)
	}
}

func TestVerifyPeerNeedsTLS(t *testing.T) {
	cfg := serverConfig(newRecorder())
	cfg.VerifyPeer = func(tls.ConnectionState) error { return nil }
	if err := cfg.Validate(); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("server: %v", err)
	}
	ccfg := clientConfig("127.0.0.1:1")
	ccfg.VerifyPeer = cfg.VerifyPeer
	if err := ccfg.Validate(); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("client: %v", err)
	}
}

// TestCloseDuringTheTLSHandshake closes clients while their TLS handshake
// waits on a server that accepts and never answers: the handshake's own
// cancellation and the client's must not race on the connection (the
// race detector checks; an earlier connect's closure read the dialed
// connection while its return overwrote it).
func TestCloseDuringTheTLSHandshake(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	ca := newTestCA(t, "cluster CA")
	cert := ca.issue(t, "topo/e1/"+clientWorker)
	for range 50 {
		cfg := clientConfig(ln.Addr().String())
		cfg.TLS = ca.clientTLS(&cert)
		cli, err := NewClient(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		c := <-accepted // the client is in its handshake, waiting for the server's hello
		cli.Close()
		c.Close()
		if st := cli.Stats(); st.Connects != 0 {
			t.Fatalf("connected to a server that never answered: %+v", st)
		}
	}
}
