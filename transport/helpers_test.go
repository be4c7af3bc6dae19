package transport

import (
	"context"
	"errors"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	testTopology = "topo"
	serverWorker = "w-server"
	clientWorker = "w-client"
)

// recorder is a Handler that keeps every message per task. With gate set,
// Deliver waits until the gate is closed (a stalled receiver).
type recorder struct {
	mu      sync.Mutex
	byTask  map[TaskID][]Message
	n       int
	changed chan struct{} // closed and replaced on every delivery
	gate    chan struct{}
	err     error // returned by every Deliver when set
}

func newRecorder() *recorder {
	return &recorder{byTask: map[TaskID][]Message{}, changed: make(chan struct{})}
}

func (r *recorder) Deliver(ctx context.Context, from string, task TaskID, msgs []Message) error {
	if r.gate != nil {
		select {
		case <-r.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range msgs {
		if m.Task != task {
			panic("message delivered to the wrong task")
		}
	}
	r.byTask[task] = append(r.byTask[task], msgs...)
	r.n += len(msgs)
	close(r.changed)
	r.changed = make(chan struct{})
	return r.err
}

// count returns the number of messages delivered.
func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// waitFor waits until at least n messages were delivered.
func (r *recorder) waitFor(t testing.TB, n int) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		r.mu.Lock()
		got, ch := r.n, r.changed
		r.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("%d messages delivered, want %d", got, n)
		}
	}
}

func (r *recorder) messages(task TaskID) []Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Message(nil), r.byTask[task]...)
}

func serverConfig(h Handler) ServerConfig {
	return ServerConfig{Topology: testTopology, Worker: serverWorker, Handler: h}
}

func clientConfig(addr string) ClientConfig {
	return ClientConfig{Topology: testTopology, Worker: clientWorker, Peer: serverWorker, Addr: addr,
		MinBackoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond}
}

func listen(t testing.TB, cfg ServerConfig) *Server {
	t.Helper()
	s, err := Listen(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func dial(t testing.TB, cfg ClientConfig) *Client {
	t.Helper()
	c, err := NewClient(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// tuple returns a small tuple for task with a sequence number.
func tuple(task TaskID, seq int) Message {
	return Message{Kind: KindTuple, Task: task, Stream: "default", Source: 1,
		Values: []any{"word", seq, 1.5}, Anchors: []Anchor{{Root: RootID(seq + 1), Edge: uint64(seq)}}}
}

// memNet is an in-memory network of net.Pipe connections, for tests in a
// testing/synctest bubble (a goroutine blocked on a pipe is durably
// blocked; one blocked on a socket is not).
type memNet struct {
	mu        sync.Mutex
	listeners map[string]*memListener
	faults    func(net.Conn) net.Conn // wraps every client end, when set
}

func newMemNet() *memNet { return &memNet{listeners: map[string]*memListener{}} }

func (n *memNet) listen(addr string) *memListener {
	n.mu.Lock()
	defer n.mu.Unlock()
	l := &memListener{net: n, addr: addr, conns: make(chan net.Conn), done: make(chan struct{})}
	n.listeners[addr] = l
	return l
}

func (n *memNet) dial(ctx context.Context, addr string) (net.Conn, error) {
	n.mu.Lock()
	l, faults := n.listeners[addr], n.faults
	n.mu.Unlock()
	if l == nil {
		return nil, &net.OpError{Op: "dial", Net: "mem", Err: syscall.ECONNREFUSED}
	}
	client, server := net.Pipe()
	select {
	case l.conns <- server:
	case <-l.done:
		return nil, &net.OpError{Op: "dial", Net: "mem", Err: syscall.ECONNREFUSED}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if faults != nil {
		return faults(client), nil
	}
	return client, nil
}

type memListener struct {
	net   *memNet
	addr  string
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *memListener) Close() error {
	l.once.Do(func() {
		l.net.mu.Lock()
		if l.net.listeners[l.addr] == l {
			delete(l.net.listeners, l.addr)
		}
		l.net.mu.Unlock()
		close(l.done)
	})
	return nil
}

func (l *memListener) Addr() net.Addr { return memAddr(l.addr) }

type memAddr string

func (a memAddr) Network() string { return "mem" }
func (a memAddr) String() string  { return string(a) }

// faultConn fails its writes once broken, as a connection reset would.
type faultConn struct {
	net.Conn
	mu     sync.Mutex
	broken bool
}

var errInjected = errors.New("injected connection reset")

func (c *faultConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	broken := c.broken
	c.mu.Unlock()
	if broken {
		c.Conn.Close()
		return 0, errInjected
	}
	return c.Conn.Write(b)
}

func (c *faultConn) breakNow() {
	c.mu.Lock()
	c.broken = true
	c.mu.Unlock()
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }
