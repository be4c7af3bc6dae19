package transport

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// waitErr waits until the client reports an error.
func waitErr(t testing.TB, c *Client) error {
	t.Helper()
	waitClient(t, c, "an error", func(ClientStats) bool { return c.Err() != nil })
	return c.Err()
}

func TestHandshakeMismatchIsRefused(t *testing.T) {
	rec := newRecorder()
	srv := listen(t, serverConfig(rec))
	cases := []struct {
		name   string
		change func(*ClientConfig)
		reason []string
	}{
		{"topology", func(c *ClientConfig) { c.Topology = "other" }, []string{`"other"`, `"topo"`}},
		{"worker", func(c *ClientConfig) { c.Peer = "w-9" }, []string{`"w-9"`, `"w-server"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := clientConfig(srv.Addr().String())
			c.change(&cfg)
			cli := dial(t, cfg)
			if err := cli.Send(context.Background(), tuple(1, 0)); err != nil {
				t.Fatal(err)
			}
			err := waitErr(t, cli)
			var he *HandshakeError
			if !errors.As(err, &he) || !errors.Is(err, ErrHandshake) || !he.Remote {
				t.Fatalf("got %v, want a HandshakeError from the server", err)
			}
			for _, r := range c.reason {
				if !strings.Contains(he.Reason, r) {
					t.Errorf("reason %q does not name %s", he.Reason, r)
				}
			}
			t.Log(err)
			if st := cli.Stats(); st.Connects != 0 || st.Sent != 0 {
				t.Fatalf("a refused client sent: %+v", st)
			}
		})
	}
	if rec.count() != 0 || srv.Stats().Refused < 2 {
		t.Fatalf("refused peers: %d messages delivered, stats %+v", rec.count(), srv.Stats())
	}
}

func TestHandshakeVersionAndMagic(t *testing.T) {
	srv := listen(t, serverConfig(newRecorder()))
	conn := rawDial(t, srv)
	// Version 9: the server answers, refusing, before closing.
	body := []byte{0x94, 0xa5, 'h', 'e', 'l', 'l', 'o', 0xa4, 't', 'o', 'p', 'o', 0xa1, 'c', 0xa8, 'w', '-', 's', 'e', 'r', 'v', 'e', 'r'}
	hello := append([]byte(magic), 9, 0, byte(len(body)))
	if _, err := conn.Write(append(hello, body...)); err != nil {
		t.Fatal(err)
	}
	_, f, err := readHello(conn, 3)
	if err != nil || f[0] != refusedWord || !strings.Contains(f[2], "version 9") {
		t.Fatalf("answer %q, %v", f, err)
	}
	expectClosed(t, conn)

	// Not our protocol at all: closed without an answer.
	conn = rawDial(t, srv)
	conn.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	expectClosed(t, conn)
	if st := srv.Stats(); st.Refused != 2 {
		t.Fatalf("stats %+v", st)
	}
}

func TestBadFramesCloseTheConnection(t *testing.T) {
	rec := newRecorder()
	scfg := serverConfig(rec)
	scfg.MaxFrameBytes = 1 << 10
	srv := listen(t, scfg)
	valid, err := appendFrame(newEncoder(nil), nil, []Message{tuple(1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]byte{
		"oversize":      binary.BigEndian.AppendUint32(nil, 1<<10+1),
		"huge":          {0xff, 0xff, 0xff, 0xff},
		"garbage":       append(binary.BigEndian.AppendUint32(nil, 6), "\xc1garbg"...),
		"short count":   append(binary.BigEndian.AppendUint32(nil, 2), 0x92, 0x93),
		"trailing":      append(append(binary.BigEndian.AppendUint32(nil, uint32(len(valid)-4+1)), valid[4:]...), 0),
		"unknown kind":  append(binary.BigEndian.AppendUint32(nil, 5), 0x91, 0x93, 0x09, 0x01, 0x01),
		"bad ext":       append(binary.BigEndian.AppendUint32(nil, 11), 0x91, 0x96, 1, 1, 0xa0, 1, 0x90, 0x91, 0xd4, 0x05, 0x00),
		"huge string":   append(binary.BigEndian.AppendUint32(nil, 9), 0x91, 0x96, 1, 1, 0xdb, 0xff, 0xff, 0xff, 0xff),
		"deep nesting":  append(binary.BigEndian.AppendUint32(nil, 48), append([]byte{0x91, 0x96, 1, 1, 0xa0, 1, 0x90, 0x91}, []byte(strings.Repeat("\x91", 40))...)...),
		"negative task": append(binary.BigEndian.AppendUint32(nil, 12), 0x91, 0x93, 0x04, 0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0),
	}
	for name, frame := range cases {
		t.Run(name, func(t *testing.T) {
			before := srv.Stats().BadFrames
			conn := rawDial(t, srv)
			if _, err := clientHandshake(conn, &ClientConfig{Topology: testTopology, Worker: "raw", Peer: serverWorker}); err != nil {
				t.Fatal(err)
			}
			conn.Write(frame)
			expectClosed(t, conn)
			waitServer(t, srv, func(st ServerStats) bool { return st.BadFrames == before+1 })
		})
	}
	// The process and the server are fine: a proper client still gets through.
	cli := dial(t, clientConfig(srv.Addr().String()))
	sendRange(t, cli, 1, 0, 3)
	rec.waitFor(t, 3)
	if rec.count() != 3 {
		t.Fatalf("%d messages delivered, want the 3 valid ones only", rec.count())
	}
}

func TestHandlerErrorClosesTheConnection(t *testing.T) {
	rec := newRecorder()
	rec.err = errors.New("no such task")
	srv := listen(t, serverConfig(rec))
	cli := dial(t, clientConfig(srv.Addr().String()))
	sendRange(t, cli, 1, 0, 1)
	waitServer(t, srv, func(st ServerStats) bool { return st.HandlerErrors == 1 })
	waitClient(t, cli, "a reconnect", func(st ClientStats) bool { return st.Connects >= 2 })
}

func TestSendRefusesWhatItCannotEncode(t *testing.T) {
	rec := newRecorder()
	srv := listen(t, serverConfig(rec))
	cli := dial(t, clientConfig(srv.Addr().String()))
	ctx := context.Background()
	err := cli.Send(ctx, tuple(1, 0), Message{Kind: KindTuple, Task: 1, Values: []any{struct{}{}}}, tuple(1, 2))
	if !errors.Is(err, ErrUnsupportedValue) {
		t.Fatalf("got %v", err)
	}
	if err := cli.Send(ctx, Message{Task: 1}); err == nil {
		t.Fatal("a message without a kind was accepted")
	}
	if err := cli.Send(ctx, tuple(1, 3)); err != nil {
		t.Fatal(err)
	}
	rec.waitFor(t, 2)
	if err := cli.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got := rec.messages(1)
	if len(got) != 2 || got[0].Values[1] != 0 || got[1].Values[1] != 3 {
		t.Fatalf("delivered %v", got)
	}
}

func TestCloseUnblocksSendAndDropsTheQueue(t *testing.T) {
	cfg := clientConfig("127.0.0.1:1") // nothing listens there
	cfg.QueueBytes = 256
	cli, err := NewClient(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			if err := cli.Send(context.Background(), tuple(1, i)); err != nil {
				errc <- err
				return
			}
		}
	}()
	waitClient(t, cli, "a full queue", func(st ClientStats) bool { return st.QueuedBytes >= cfg.QueueBytes })
	cli.Close()
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Fatalf("blocked Send returned %v", err)
	}
	if err := cli.Flush(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Flush after Close: %v", err)
	}
	if st := cli.Stats(); st.Dropped == 0 || st.Dropped != st.Queued {
		t.Fatalf("stats %+v", st)
	}
}

func TestContextEndsClientAndServer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	rec := newRecorder()
	scfg := serverConfig(rec)
	srv, err := Listen(ctx, scfg)
	if err != nil {
		t.Fatal(err)
	}
	cli, err := NewClient(ctx, clientConfig(srv.Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	sendRange(t, cli, 1, 0, 10)
	rec.waitFor(t, 10)
	cancel()
	<-cli.done
	if err := cli.Send(context.Background(), tuple(1, 10)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Send after the context ended: %v", err)
	}
	srv.wg.Wait() // every server goroutine stops without Close
	if _, err := net.Dial("tcp", srv.Addr().String()); err == nil {
		t.Fatal("the server still listens")
	}
	cli.Close()
	srv.Close()
}

func TestConfigValidation(t *testing.T) {
	good := clientConfig("x:1")
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := []func(*ClientConfig){
		func(c *ClientConfig) { c.Topology = "" },
		func(c *ClientConfig) { c.Worker = strings.Repeat("w", maxIDBytes+1) },
		func(c *ClientConfig) { c.Peer = "" },
		func(c *ClientConfig) { c.Addr = "" },
		func(c *ClientConfig) { c.QueueBytes = -1 },
		func(c *ClientConfig) { c.FrameBytes, c.MaxFrameBytes = 2000, 1000 },
		func(c *ClientConfig) { c.MaxFrameBytes = 10 },
		func(c *ClientConfig) { c.MinBackoff, c.MaxBackoff = time.Second, time.Millisecond },
		func(c *ClientConfig) { c.ConnectTimeout = -1 },
	}
	for i, change := range bad {
		c := good
		change(&c)
		if err := c.Validate(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("client case %d: %v", i, err)
		}
		if _, err := NewClient(context.Background(), c); err == nil {
			t.Errorf("client case %d: NewClient accepted it", i)
		}
	}
	s := serverConfig(newRecorder())
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	for i, change := range []func(*ServerConfig){
		func(c *ServerConfig) { c.Handler = nil },
		func(c *ServerConfig) { c.Worker = "" },
		func(c *ServerConfig) { c.ReceiveQueue = -2 },
		func(c *ServerConfig) { c.HandshakeTimeout = -1 },
	} {
		c := s
		change(&c)
		if err := c.Validate(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("server case %d: %v", i, err)
		}
	}
}

func rawDial(t testing.TB, srv *Server) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// expectClosed reads until the peer closes the connection.
func expectClosed(t testing.TB, conn net.Conn) {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := io.Copy(io.Discard, conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the server kept the connection open")
	}
}

// waitServer waits until cond holds for the server's stats, checking
// whenever a connection ends.
func waitServer(t testing.TB, s *Server, cond func(ServerStats) bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		wait := s.ended.Wait()
		if cond(s.Stats()) {
			return
		}
		select {
		case <-wait:
		case <-deadline:
			t.Fatalf("server stats %+v", s.Stats())
		}
	}
}
