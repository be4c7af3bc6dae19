package nimbus

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/squallstream/squall/internal/proctest"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/squallstream/squall/cluster/codestore"
	"github.com/squallstream/squall/cluster/internal/etcdtest"
	"github.com/squallstream/squall/cluster/leader"
	"github.com/squallstream/squall/internal/testenv"
)

// proc is a nimbus in a child process.
type proc struct {
	t       *testing.T
	id, dir string
	cmd     *exec.Cmd
	control string
	logs    *proctest.Buffer
	done    chan struct{}
}

type cluster struct {
	t         *testing.T
	endpoints []string
	prefix    string
	ttl       time.Duration
	cli       *clientv3.Client
}

func newCluster(t *testing.T, ttl time.Duration) *cluster {
	eps := testenv.EtcdEndpoints(t)
	return &cluster{t: t, endpoints: eps, prefix: "/" + testenv.UniqueName(t, "nimbus"), ttl: ttl, cli: etcdtest.Client(t, eps)}
}

// start runs nimbus id with its code in dir (kept across restarts).
func (c *cluster) start(id, dir string, rf int) *proc {
	t := c.t
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childVar+"=1", "CHILD_ID="+id, "CHILD_DIR="+dir, "CHILD_PREFIX="+c.prefix,
		"CHILD_ENDPOINTS="+strings.Join(c.endpoints, ","), "CHILD_TTL="+c.ttl.String(), fmt.Sprintf("CHILD_RF=%d", rf))
	p := &proc{t: t, id: id, dir: dir, cmd: cmd, logs: &proctest.Buffer{}, done: make(chan struct{})}
	cmd.Stderr = p.logs
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGCONT)
		cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("---- logs of nimbus %s (pid %d):\n%s", id, cmd.Process.Pid, p.logs)
		}
	})
	line := make(chan string, 1)
	go func() {
		r := bufio.NewReader(out)
		s, _ := r.ReadString('\n')
		line <- s
		io.Copy(io.Discard, r)
	}()
	select {
	case s := <-line:
		p.control = strings.TrimSpace(strings.TrimPrefix(s, "control "))
	case <-time.After(30 * time.Second):
		t.Fatalf("nimbus %s did not start:\n%s", id, p.logs)
	}
	return p
}

func (p *proc) signal(sig syscall.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatalf("signal %v to %s: %v", sig, p.id, err)
	}
	if sig == syscall.SIGKILL {
		<-p.done
	}
}

// post sends a control request and returns the status and body.
func (p *proc) post(path string, body io.Reader) (int, string) {
	p.t.Helper()
	resp, err := http.Post(p.control+path, "application/octet-stream", body)
	if err != nil {
		p.t.Fatalf("control %s %s: %v", p.id, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// waitLeading returns once the nimbus leads.
func (p *proc) waitLeading() {
	p.t.Helper()
	if code, msg := p.post("/wait-leading", nil); code != 200 {
		p.t.Fatalf("%s not leading: %d %s", p.id, code, msg)
	}
}

func (c *cluster) electionPrefix() string { return c.prefix + "/nimbus/leader/" }

// waitLeader waits until the elected leader (first election key) is one of
// ids and returns it.
func (c *cluster) waitLeader(timeout time.Duration, ids ...string) string {
	c.t.Helper()
	var got string
	etcdtest.WaitFor(c.t, c.cli, c.electionPrefix(), timeout, fmt.Sprintf("one of %v leading", ids), func(map[string]string) bool {
		id, err := leader.LeaderID(context.Background(), c.cli, strings.TrimSuffix(c.electionPrefix(), "/"))
		got = id
		for _, want := range ids {
			if err == nil && id == want {
				return true
			}
		}
		return false
	})
	return got
}

func (c *cluster) proc(ps []*proc, id string) *proc {
	for _, p := range ps {
		if p.id == id {
			return p
		}
	}
	c.t.Fatalf("no nimbus %s", id)
	return nil
}

// SIGKILL of the leader: a standby leads within the lease TTL (plus etcd's
// lease-expiry granularity), and the assignments are untouched.
func TestProcessLeaderKilled(t *testing.T) {
	const ttl = 2 * time.Second
	c := newCluster(t, ttl)
	var ps []*proc
	for _, id := range []string{"n1", "n2", "n3"} {
		ps = append(ps, c.start(id, t.TempDir(), 1))
	}
	first := c.waitLeader(30*time.Second, "n1", "n2", "n3")
	lp := c.proc(ps, first)
	lp.waitLeading()
	for _, topo := range []string{"t1", "t2"} {
		if code, msg := lp.post("/assign?topology="+topo+"&value=workers-of-"+topo, nil); code != 200 {
			t.Fatalf("assign on leader %s: %d %s", first, code, msg)
		}
	}
	// A standby refuses, naming the leader.
	for _, p := range ps {
		if p.id != first {
			code, msg := p.post("/assign?topology=t1&value=x", nil)
			if code != http.StatusMisdirectedRequest || !strings.Contains(msg, "the leader is "+first) {
				t.Fatalf("standby %s answered %d %q, want a refusal naming %s", p.id, code, msg, first)
			}
			break
		}
	}
	before, err := c.cli.Get(context.Background(), c.prefix+"/assignments/", clientv3.WithPrefix())
	if err != nil || len(before.Kvs) != 2 {
		t.Fatalf("assignments: %v %v", before, err)
	}

	killed := time.Now()
	lp.signal(syscall.SIGKILL)
	var others []string
	for _, p := range ps {
		if p.id != first {
			others = append(others, p.id)
		}
	}
	next := c.waitLeader(ttl+10*time.Second, others...)
	took := time.Since(killed)
	t.Logf("leader %s killed; %s leads %v later (lease TTL %v)", first, next, took.Round(time.Millisecond), ttl)
	if took > ttl+time.Second {
		t.Errorf("failover took %v, want within the TTL %v (+1s for etcd's lease expiry checks)", took, ttl)
	}
	after, err := c.cli.Get(context.Background(), c.prefix+"/assignments/", clientv3.WithPrefix())
	if err != nil || len(after.Kvs) != 2 {
		t.Fatalf("assignments after failover: %v %v", after, err)
	}
	for i, kv := range after.Kvs {
		if b := before.Kvs[i]; string(kv.Key) != string(b.Key) || string(kv.Value) != string(b.Value) || kv.ModRevision != b.ModRevision {
			t.Errorf("assignment %s changed by the failover: %q@%d → %q@%d", kv.Key, b.Value, b.ModRevision, kv.Value, kv.ModRevision)
		}
	}
	c.proc(ps, next).waitLeading()
	if code, msg := c.proc(ps, next).post("/assign?topology=t1&value=v2", nil); code != 200 {
		t.Fatalf("new leader %s cannot assign: %d %s", next, code, msg)
	}
}

// A leader paused (SIGSTOP) past its lease is replaced; resumed (SIGCONT),
// its write through the old leadership is rejected and changes nothing.
func TestProcessPausedLeaderIsFenced(t *testing.T) {
	const ttl = 2 * time.Second
	c := newCluster(t, ttl)
	a := c.start("a", t.TempDir(), 1)
	a.waitLeading()
	b := c.start("b", t.TempDir(), 1)
	etcdtest.WaitFor(t, c.cli, c.electionPrefix(), 30*time.Second, "b queued", func(kv map[string]string) bool { return len(kv) == 2 })
	if code, msg := a.post("/assign?topology=t1&value=from-a", nil); code != 200 {
		t.Fatalf("assign on a: %d %s", code, msg)
	}

	a.signal(syscall.SIGSTOP)
	c.waitLeader(ttl+10*time.Second, "b") // a's lease expired: b leads
	b.waitLeading()
	if code, msg := b.post("/assign?topology=t1&value=from-b", nil); code != 200 {
		t.Fatalf("assign on b: %d %s", code, msg)
	}
	a.signal(syscall.SIGCONT)
	key := c.prefix + "/assignments/t1"
	code, msg := a.post("/stale-write?key="+key+"&value=stale-from-a", nil)
	if code != http.StatusConflict || !strings.Contains(msg, "deposed") {
		t.Fatalf("the resumed old leader's write answered %d %q, want 409 deposed", code, msg)
	}
	resp, err := c.cli.Get(context.Background(), key)
	if err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "from-b" {
		t.Fatalf("assignment after the stale write: %v %v, want from-b", resp, err)
	}
}

// gate is an HTTP handler that refuses (503) until opened, counting
// refusals.
type gate struct {
	mu      sync.Mutex
	open    bool
	refused int
	changed chan struct{}
	next    http.Handler
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	open := g.open
	if !open {
		g.refused++
		select {
		case g.changed <- struct{}{}:
		default:
		}
	}
	g.mu.Unlock()
	if !open {
		http.Error(w, "closed by the test", http.StatusServiceUnavailable)
		return
	}
	g.next.ServeHTTP(w, r)
}

// A nimbus whose copy of an active topology's code was deleted does not
// campaign until it has fetched the code again.
func TestProcessNimbusWithoutCodeCannotLead(t *testing.T) {
	const ttl = 2 * time.Second
	c := newCluster(t, ttl)
	ctx := context.Background()

	// s: a code holder in this process (no candidacy), refusing to serve
	// until the test opens its gate.
	sdir, _ := codestore.OpenDir(t.TempDir())
	g := &gate{changed: make(chan struct{}, 1)}
	srv := startServer(t, g)
	s, err := codestore.New(codestore.Config{Client: c.cli, Prefix: c.prefix, ID: "s", URL: srv, Dir: sdir, TTL: ttl, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	g.next = s.Handler()
	sctx, scancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); s.Run(sctx) }()
	t.Cleanup(func() { scancel(); wg.Wait() })

	a := c.start("a", t.TempDir(), 2)
	a.waitLeading()
	code, msg := a.post("/submit?topology=t1", strings.NewReader("the code of t1"))
	if code != 200 {
		t.Fatalf("submit: %d %s", code, msg)
	}
	recs, _, _ := s.Records(ctx)
	if len(recs) != 1 || recs[0].Status != codestore.Active {
		t.Fatalf("records after submit: %+v", recs)
	}
	dg, _ := codestore.ParseDigest(recs[0].Artifact)
	holders := s.HoldersPrefix("t1", dg)

	bdir := t.TempDir()
	b := c.start("b", bdir, 2)
	etcdtest.WaitFor(t, c.cli, holders, 30*time.Second, "b holds t1", func(kv map[string]string) bool { return kv[holders+"b"] != "" })
	b.signal(syscall.SIGKILL)
	if err := os.Remove(filepath.Join(bdir, dg.String())); err != nil {
		t.Fatal(err)
	}
	a.signal(syscall.SIGKILL)
	etcdtest.WaitFor(t, c.cli, c.prefix+"/", ttl+10*time.Second, "a and b gone", func(kv map[string]string) bool {
		for k := range kv {
			if strings.HasPrefix(k, c.electionPrefix()) || k == holders+"a" || k == holders+"b" {
				return false
			}
		}
		return true
	})

	start, err := c.cli.Get(ctx, "/")
	if err != nil {
		t.Fatal(err)
	}
	b = c.start("b", bdir, 2)
	// b asks s for the code and is refused, twice (a retry after a refusal).
	for n := 0; n < 2; {
		select {
		case <-g.changed:
			g.mu.Lock()
			n = g.refused
			g.mu.Unlock()
		case <-time.After(30 * time.Second):
			t.Fatalf("b never asked s for the code:\n%s", b.logs)
		}
	}
	if id, _ := leader.LeaderID(ctx, c.cli, strings.TrimSuffix(c.electionPrefix(), "/")); id != "" {
		t.Fatalf("%s leads while b lacks the code", id)
	}
	g.mu.Lock()
	g.open = true
	g.mu.Unlock()
	c.waitLeader(30*time.Second, "b")

	// Order of events since b restarted: its holder key before any
	// election key.
	hist, err := c.cli.Get(ctx, c.prefix+"/", clientv3.WithPrefix(), clientv3.WithMinCreateRev(start.Header.Revision+1))
	if err != nil {
		t.Fatal(err)
	}
	var holderRev, electionRev int64
	for _, kv := range hist.Kvs {
		switch {
		case string(kv.Key) == holders+"b":
			holderRev = kv.CreateRevision
		case strings.HasPrefix(string(kv.Key), c.electionPrefix()):
			if electionRev == 0 || kv.CreateRevision < electionRev {
				electionRev = kv.CreateRevision
			}
		}
	}
	if holderRev == 0 || electionRev == 0 || electionRev < holderRev {
		t.Fatalf("b campaigned (rev %d) before it held the code (rev %d)", electionRev, holderRev)
	}
}

func startServer(t *testing.T, h http.Handler) string {
	srv := &http.Server{Handler: h}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}
