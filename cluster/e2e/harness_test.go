// Package e2e runs the cluster's daemons as processes of a real program
// (cluster/internal/testprog, built once in TestMain) against the real
// three-member etcd cluster of scripts/services.sh, and kills them.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/squallstream/squall/cluster/internal/etcdtest"
	"github.com/squallstream/squall/cluster/leader"
	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/internal/testenv"
)

var testprog string // the built test program

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "squall-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testprog = filepath.Join(dir, "testprog")
	out, err := exec.Command("go", "build", "-o", testprog, "github.com/squallstream/squall/cluster/internal/testprog").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building the test program: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// cluster is one test's cluster: its etcd prefix, its daemons, a store
// directory shared by its workers.
type cluster struct {
	t         *testing.T
	endpoints []string
	prefix    string
	keys      meta.Layout
	cli       *clientv3.Client
	ttl       time.Duration
	env       []string

	mu    sync.Mutex
	procs []*proc
	dirs  []string // supervisor data dirs, for the cleanup of workers
}

type proc struct {
	name string
	cmd  *exec.Cmd
	logs *syncBuffer
	done chan struct{}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newCluster(t *testing.T, ttl time.Duration, env ...string) *cluster {
	eps := testenv.EtcdEndpoints(t)
	prefix := "/" + testenv.UniqueName(t, "e2e")
	c := &cluster{t: t, endpoints: eps, prefix: prefix, keys: meta.New(prefix), cli: etcdtest.Client(t, eps),
		ttl: ttl}
	c.env = append([]string{"SQUALL_ETCD_ENDPOINTS=" + strings.Join(eps, ","), "SQUALL_PREFIX=" + prefix,
		"SQUALL_LOG_LEVEL=debug"}, env...)
	t.Cleanup(c.cleanup)
	return c
}

// cleanup kills every daemon and every worker the supervisors started.
func (c *cluster) cleanup() {
	c.mu.Lock()
	procs, dirs := c.procs, c.dirs
	c.mu.Unlock()
	for _, p := range procs {
		p.cmd.Process.Kill()
		<-p.done
	}
	for _, pid := range c.workerPIDs(dirs) {
		syscall.Kill(-pid, syscall.SIGKILL)
		syscall.Kill(pid, syscall.SIGKILL)
	}
	if c.t.Failed() {
		for _, p := range procs {
			c.t.Logf("---- logs of %s (pid %d):\n%s", p.name, p.cmd.Process.Pid, tail(p.logs.String(), 80))
		}
		for _, d := range dirs {
			logs, _ := filepath.Glob(filepath.Join(d, "workers", "*", "worker.*"))
			for _, l := range logs {
				b, _ := os.ReadFile(l)
				c.t.Logf("---- %s:\n%s", l, tail(string(b), 40))
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c.cli.Delete(ctx, c.prefix+"/", clientv3.WithPrefix())
}

func tail(s string, lines int) string {
	ls := strings.Split(s, "\n")
	if len(ls) > lines {
		ls = ls[len(ls)-lines:]
	}
	return strings.Join(ls, "\n")
}

// workerPIDs lists the workers known from pid files and from etcd.
func (c *cluster) workerPIDs(dirs []string) []int {
	var pids []int
	for _, d := range dirs {
		files, _ := filepath.Glob(filepath.Join(d, "workers", "*", "worker.json"))
		for _, f := range files {
			var rec struct{ PID int }
			if b, err := os.ReadFile(f); err == nil && json.Unmarshal(b, &rec) == nil && rec.PID > 0 {
				pids = append(pids, rec.PID)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if resp, err := c.cli.Get(ctx, c.keys.Workers(), clientv3.WithPrefix()); err == nil {
		for _, kv := range resp.Kvs {
			var w meta.WorkerInfo
			if json.Unmarshal(kv.Value, &w) == nil && w.PID > 0 {
				pids = append(pids, w.PID)
			}
		}
	}
	return pids
}

func (c *cluster) start(name string, args ...string) *proc {
	c.t.Helper()
	cmd := exec.Command(testprog, args...)
	cmd.Env = append(os.Environ(), c.env...)
	p := &proc{name: name, cmd: cmd, logs: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.logs, p.logs
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	go func() { cmd.Wait(); close(p.done) }()
	c.mu.Lock()
	c.procs = append(c.procs, p)
	c.mu.Unlock()
	return p
}

// nimbus starts a nimbus on a free loopback port.
func (c *cluster) nimbus(name string) *proc {
	return c.start("nimbus "+name, "nimbus", "--listen", "127.0.0.1:0", "--data-dir", filepath.Join(c.t.TempDir(), name),
		"--ttl", c.ttl.String())
}

// supervisor starts supervisor id on dir (reuse dir to restart it).
func (c *cluster) supervisor(id, dir string, firstPort int) *proc {
	c.mu.Lock()
	c.dirs = append(c.dirs, dir)
	c.mu.Unlock()
	return c.start("supervisor "+id, "supervisor", "--id", id, "--data-dir", dir, "--slots", "2",
		"--first-port", strconv.Itoa(firstPort), "--ttl", c.ttl.String(), "--min-uptime", "2s", "--grace", "5s")
}

func (p *proc) kill9(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 %s: %v", p.name, err)
	}
	<-p.done
}

// cmd runs a client command and returns its output.
func (c *cluster) cmd(args ...string) (string, error) {
	cmd := exec.Command(testprog, args...)
	cmd.Env = append(os.Environ(), c.env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (c *cluster) submit(name string) {
	c.t.Helper()
	if out, err := c.cmd("submit", name, "--timeout", "60s"); err != nil {
		c.t.Fatalf("submit %s: %v\n%s", name, err, out)
	}
}

// status waits until the topology's status satisfies cond.
func (c *cluster) status(topology string, timeout time.Duration, what string, cond func(meta.Status) bool) meta.Status {
	c.t.Helper()
	var st meta.Status
	etcdtest.WaitFor(c.t, c.cli, c.keys.Status(topology), timeout, what, func(kv map[string]string) bool {
		v, ok := kv[c.keys.Status(topology)]
		if !ok {
			return false
		}
		var s meta.Status
		if json.Unmarshal([]byte(v), &s) != nil {
			return false
		}
		st = s
		return cond(s)
	})
	return st
}

// assignment reads the topology's assignment and its mod revision.
func (c *cluster) assignment(topology string) (meta.Assignment, int64) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.cli.Get(ctx, c.keys.Assignment(topology))
	if err != nil || len(resp.Kvs) == 0 {
		c.t.Fatalf("no assignment of %s: %v", topology, err)
	}
	var a meta.Assignment
	if err := json.Unmarshal(resp.Kvs[0].Value, &a); err != nil {
		c.t.Fatal(err)
	}
	return a, resp.Kvs[0].ModRevision
}

// workers lists the live worker keys of a topology.
func (c *cluster) workers(topology string) []meta.WorkerInfo {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.cli.Get(ctx, c.keys.Workers()+topology+"/", clientv3.WithPrefix())
	if err != nil {
		c.t.Fatal(err)
	}
	var out []meta.WorkerInfo
	for _, kv := range resp.Kvs {
		var w meta.WorkerInfo
		if json.Unmarshal(kv.Value, &w) == nil {
			out = append(out, w)
		}
	}
	return out
}

// leader returns the leader nimbus's ID (its address), waiting for one.
func (c *cluster) leader(timeout time.Duration, not string) string {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		id, err := leader.LeaderID(ctx, c.cli, c.keys.Leader())
		cancel()
		if err == nil && id != "" && id != not {
			return id
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("no leader other than %q within %v (err %v)", not, timeout, err)
		}
		etcdtest.WaitFor(c.t, c.cli, c.keys.Leader()+"/", timeout, "a leader election change", func(kv map[string]string) bool {
			for _, v := range kv {
				if v != not {
					return true
				}
			}
			return false
		})
	}
}

// alive reports whether pid runs (and is not a zombie).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	f := strings.Fields(s[i+1:])
	return len(f) > 0 && f[0] != "Z"
}

var errTimeout = errors.New("timeout")

// eventually polls cond every 50ms until it holds or timeout passes (for
// process liveness, which etcd cannot watch).
func eventually(timeout time.Duration, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return errTimeout
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// workerProcesses lists the live processes whose command line names dir
// (the workers of the supervisor on dir).
func workerProcesses(dir string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), "\x00worker\x00") && strings.Contains(string(b), dir) && alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// registered waits until the worker of slot in epoch is registered with
// an address, in a process other than not, and returns it.
func (c *cluster) registered(topology string, slot meta.Slot, epoch int64, not int) meta.WorkerInfo {
	c.t.Helper()
	var out meta.WorkerInfo
	etcdtest.WaitFor(c.t, c.cli, c.keys.Worker(topology, slot), 60*time.Second, "worker "+slot.String()+" registered",
		func(kv map[string]string) bool {
			var w meta.WorkerInfo
			if json.Unmarshal([]byte(kv[c.keys.Worker(topology, slot)]), &w) != nil {
				return false
			}
			out = w
			return w.Epoch == epoch && w.Addr != "" && w.PID != not
		})
	return out
}

// generation reads the topology's generation record.
func (c *cluster) generation(topology string) meta.Generation {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.cli.Get(ctx, c.keys.Generation(topology))
	if err != nil || len(resp.Kvs) == 0 {
		c.t.Fatalf("no generation record of %s: %v", topology, err)
	}
	var g meta.Generation
	if err := json.Unmarshal(resp.Kvs[0].Value, &g); err != nil {
		c.t.Fatal(err)
	}
	return g
}
