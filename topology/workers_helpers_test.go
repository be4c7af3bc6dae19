package topology

import (
	"context"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/squallstream/squall/transport"
)

// workers runs one topology as several RunWorker instances in the test
// process, each with a listener of its own: over loopback TCP, or over an
// in-memory network (memNet) for tests in a synctest bubble.
type workers struct {
	t       testing.TB
	name    string
	topo    *Topology
	cfg     Config
	tasks   map[TaskID]WorkerID
	addrs   map[WorkerID]string
	mem     *memNet // nil: TCP
	running map[WorkerID]*Running
	tune    func(WorkerID, *WorkerSpec) // changes each worker's spec, if set
}

// newWorkers assigns every task of topo to the worker its component is
// mapped to in byComponent ("__acker" for the acker tasks) and reserves an
// address per worker.
func newWorkers(t testing.TB, topo *Topology, cfg Config, mem *memNet, byComponent map[string]WorkerID) *workers {
	t.Helper()
	ws := &workers{t: t, name: strings.ReplaceAll(t.Name(), "/", "-"), topo: topo, cfg: cfg, mem: mem,
		tasks: map[TaskID]WorkerID{}, addrs: map[WorkerID]string{}, running: map[WorkerID]*Running{}}
	for task, comp := range topo.TaskComponents(cfg.Ackers) {
		w, ok := byComponent[comp]
		if !ok {
			t.Fatalf("component %s is not assigned", comp)
		}
		ws.tasks[TaskID(task)] = w
		ws.addrs[w] = ""
	}
	for w := range ws.addrs {
		if mem != nil {
			ws.addrs[w] = "mem-" + string(w)
			continue
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ws.addrs[w] = ln.Addr().String()
		ln.Close()
	}
	t.Cleanup(ws.stopAll)
	return ws
}

// start runs worker w, listening on its address.
func (ws *workers) start(w WorkerID) *Running {
	ws.t.Helper()
	spec := WorkerSpec{Self: w, Tasks: ws.tasks, Peers: ws.addrs,
		Client: transport.ClientConfig{MinBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond}}
	if ws.mem != nil {
		spec.Listener = ws.mem.listen(ws.addrs[w])
		spec.Client.Dial = ws.mem.dial
	} else {
		var err error
		// The port was free when newWorkers reserved it; after a stop it
		// may take a moment to be released.
		for range 100 {
			if spec.Listener, err = net.Listen("tcp", ws.addrs[w]); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if err != nil {
			ws.t.Fatal(err)
		}
	}
	if ws.tune != nil {
		ws.tune(w, &spec)
	}
	r, err := RunWorker(ws.name, ws.topo, ws.cfg, spec)
	if err != nil {
		ws.t.Fatal(err)
	}
	ws.running[w] = r
	return r
}

func (ws *workers) startAll() {
	for w := range ws.addrs {
		ws.start(w)
	}
}

// kill stops worker w at once, as if its process died: nothing is
// drained, whatever it held is lost.
func (ws *workers) kill(w WorkerID) {
	r := ws.running[w]
	delete(ws.running, w)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = r.Stop(ctx)
}

// stopAll stops the workers that run spouts first, draining their trees,
// then the others.
func (ws *workers) stopAll() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for w, r := range ws.running {
		if r.Pending() > 0 || ws.runsSpout(w) {
			_ = r.Stop(ctx)
			delete(ws.running, w)
		}
	}
	for w := range ws.running {
		ws.kill(w)
	}
}

func (ws *workers) runsSpout(w WorkerID) bool {
	comps := ws.topo.TaskComponents(ws.cfg.Ackers)
	for task, owner := range ws.tasks {
		if c := ws.topo.byID[comps[task]]; owner == w && c != nil && c.spout {
			return true
		}
	}
	return false
}

// stats sums the components' counters over the running workers.
func (ws *workers) stats() map[string]ComponentStats {
	out := map[string]ComponentStats{}
	for _, r := range ws.running {
		for name, c := range r.Stats().Components {
			s := out[name]
			s.Emitted += c.Emitted
			s.Executed += c.Executed
			s.Acked += c.Acked
			s.Failed += c.Failed
			s.TimedOut += c.TimedOut
			s.Orphans += c.Orphans
			out[name] = s
		}
	}
	return out
}

// waitUntil polls cond until it holds or the (real or bubble) deadline
// passes.
func waitUntil(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// memNet is an in-memory network of net.Pipe connections, so that workers
// can talk inside a testing/synctest bubble.
type memNet struct {
	mu        sync.Mutex
	listeners map[string]*memListener
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
	l := n.listeners[addr]
	n.mu.Unlock()
	refused := &net.OpError{Op: "dial", Net: "mem", Err: syscall.ECONNREFUSED}
	if l == nil {
		return nil, refused
	}
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
	case <-ctx.Done():
	}
	client.Close()
	server.Close()
	return nil, refused
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
