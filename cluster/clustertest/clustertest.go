// Package clustertest runs a squall program's cluster daemons (nimbus,
// supervisor) as processes for tests, against an etcd cluster, and cleans
// up after them: it kills every process it started and every worker the
// supervisors started (from their pid files and from etcd), prints their
// logs when the test failed, and removes the cluster's keys.
package clustertest

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/cluster/pki"
	"github.com/squallstream/squall/internal/proctest"
)

// Cluster is one test's cluster of processes of one program.
type Cluster struct {
	T    *testing.T
	Bin  string           // the program
	Cli  *clientv3.Client // the test's etcd client (closed by the caller)
	Keys meta.Layout      // the cluster's keys, under its own prefix
	// Sub is the subcommand under which the program has the cluster's
	// commands (empty when they are top-level).
	Sub []string
	// Env is added to every process's environment.
	Env []string
	// LogLines is how many of each log's last lines a failed test prints.
	LogLines int
	// Certs holds the cluster's CA (ca/) and the certificates of its
	// nimbuses, supervisors and of the admin the client commands run as
	// (nimbus/, supervisor/, admin/).
	Certs string

	mu       sync.Mutex
	stopOnce sync.Once
	procs    []*Proc
	dirs     []string // supervisor data dirs, for the cleanup of workers
}

// New returns a cluster of bin's processes under keys (its prefix is
// deleted at the end); env reaches every process, after the etcd
// endpoints and the prefix.
//
// The cluster runs with certificates, as docs/security.md tells an
// operator to: New creates a CA and issues a nimbus's, a supervisor's and
// an admin's certificate (Certs), which the daemons and the client
// commands find through their SQUALL_<COMMAND>_CERTS variables.
func New(t *testing.T, bin string, cli *clientv3.Client, endpoints []string, keys meta.Layout, sub []string, env ...string) *Cluster {
	c := &Cluster{T: t, Bin: bin, Cli: cli, Keys: keys, Sub: sub, LogLines: 40, Certs: t.TempDir(),
		Env: []string{"SQUALL_ETCD_ENDPOINTS=" + strings.Join(endpoints, ","), "SQUALL_PREFIX=" + keys.Prefix}}
	c.Env = append(append(c.Env, c.issueCerts()...), env...)
	t.Cleanup(c.cleanup)
	return c
}

// WithoutCerts has the processes started from now on run without
// certificates (plain HTTP, unsigned assignments: loopback only), for
// measuring what certificates cost.
func (c *Cluster) WithoutCerts() {
	c.Env = slices.DeleteFunc(c.Env, func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return strings.HasSuffix(name, "_CERTS")
	})
}

// issueCerts creates the cluster's CA and certificates under c.Certs (ca,
// nimbus, supervisor, admin) and returns the variables that hand them
// to each command.
func (c *Cluster) issueCerts() []string {
	c.T.Helper()
	ca, err := pki.NewAuthority("test", 0, time.Now())
	if err != nil {
		c.T.Fatal(err)
	}
	if err := pki.WriteAuthority(filepath.Join(c.Certs, "ca"), ca); err != nil {
		c.T.Fatal(err)
	}
	var env []string
	for _, r := range []pki.Role{pki.Nimbus, pki.Supervisor, pki.Admin} {
		b, err := ca.Issue(pki.Request{Role: r, Name: "test-" + string(r), Hosts: []string{"127.0.0.1", "::1", "localhost"}, Now: time.Now()})
		if err != nil {
			c.T.Fatal(err)
		}
		if err := pki.WriteBundle(filepath.Join(c.Certs, string(r)), b); err != nil {
			c.T.Fatal(err)
		}
	}
	env = append(env, "SQUALL_NIMBUS_CERTS="+filepath.Join(c.Certs, "nimbus"),
		"SQUALL_SUPERVISOR_CERTS="+filepath.Join(c.Certs, "supervisor"))
	for _, cmd := range []string{"SUBMIT", "KILL", "ACTIVATE", "DEACTIVATE", "REBALANCE", "LIST"} {
		env = append(env, "SQUALL_"+cmd+"_CERTS="+filepath.Join(c.Certs, "admin"))
	}
	return env
}

// Proc is a process the cluster started.
type Proc struct {
	Name string
	Cmd  *exec.Cmd
	Logs *proctest.Buffer
	Done chan struct{} // closed when it exited
}

// Start starts the program with args (after Sub).
func (c *Cluster) Start(name string, args ...string) *Proc {
	c.T.Helper()
	cmd := exec.Command(c.Bin, append(append([]string(nil), c.Sub...), args...)...)
	cmd.Env = append(os.Environ(), c.Env...)
	p := &Proc{Name: name, Cmd: cmd, Logs: &proctest.Buffer{}, Done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.Logs, p.Logs
	if err := cmd.Start(); err != nil {
		c.T.Fatal(err)
	}
	go func() { cmd.Wait(); close(p.Done) }()
	c.mu.Lock()
	c.procs = append(c.procs, p)
	c.mu.Unlock()
	return p
}

// Nimbus starts a nimbus on a free loopback port with lease ttl.
func (c *Cluster) Nimbus(name string, ttl time.Duration) *Proc {
	return c.Start("nimbus "+name, "nimbus", "--listen", "127.0.0.1:0", "--data-dir", filepath.Join(c.T.TempDir(), name),
		"--ttl", ttl.String())
}

// Supervisor starts supervisor id with two slots on dir (the same dir
// restarts it) with lease ttl.
func (c *Cluster) Supervisor(id, dir string, firstPort int, ttl time.Duration) *Proc {
	c.mu.Lock()
	c.dirs = append(c.dirs, dir)
	c.mu.Unlock()
	// Registered after dir was made (a t.TempDir, say): cleanups run last
	// registered first, so the processes stop before dir is removed.
	c.T.Cleanup(func() { c.stopOnce.Do(c.stop) })
	return c.Start("supervisor "+id, "supervisor", "--id", id, "--data-dir", dir, "--slots", "2",
		"--first-port", strconv.Itoa(firstPort), "--ttl", ttl.String(), "--min-uptime", "2s", "--grace", "5s")
}

// Run runs a command of the program (after Sub) and returns its output.
func (c *Cluster) Run(args ...string) (string, error) {
	cmd := exec.Command(c.Bin, append(append([]string(nil), c.Sub...), args...)...)
	cmd.Env = append(os.Environ(), c.Env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Kill9 kills p with SIGKILL and waits for its exit.
func (p *Proc) Kill9(t *testing.T) {
	t.Helper()
	if err := p.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 %s: %v", p.Name, err)
	}
	<-p.Done
}

// Procs returns the processes started so far, oldest first.
func (c *Cluster) Procs() []*Proc {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*Proc(nil), c.procs...)
}

// cleanup kills every process and worker, prints the logs of a failed
// test and removes the cluster's keys.
func (c *Cluster) cleanup() {
	c.stopOnce.Do(c.stop)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c.Cli.Delete(ctx, c.Keys.Prefix+"/", clientv3.WithPrefix())
}

// stop kills every process and worker of the cluster and, when the test
// failed, prints their logs. It runs once, before the directories the
// test made for the supervisors are removed (see Supervisor), so that no
// worker writes in a directory being removed.
func (c *Cluster) stop() {
	c.mu.Lock()
	procs, dirs := c.procs, c.dirs
	c.mu.Unlock()
	for _, p := range procs {
		p.Cmd.Process.Kill()
		<-p.Done
	}
	for _, pid := range c.workerPIDs(dirs) {
		syscall.Kill(-pid, syscall.SIGKILL)
		syscall.Kill(pid, syscall.SIGKILL)
	}
	if c.T.Failed() {
		for _, p := range procs {
			c.T.Logf("---- logs of %s (pid %d):\n%s", p.Name, p.Cmd.Process.Pid, proctest.Tail(p.Logs.String(), c.LogLines))
		}
		for _, d := range dirs {
			logs, _ := filepath.Glob(filepath.Join(d, "workers", "*", "worker.*"))
			for _, l := range logs {
				b, _ := os.ReadFile(l)
				c.T.Logf("---- %s:\n%s", l, proctest.Tail(string(b), c.LogLines))
			}
		}
	}
}

// WorkerPIDs lists the workers known from the supervisors' pid files and
// from etcd.
func (c *Cluster) WorkerPIDs() []int {
	c.mu.Lock()
	dirs := c.dirs
	c.mu.Unlock()
	return c.workerPIDs(dirs)
}

func (c *Cluster) workerPIDs(dirs []string) []int {
	var pids []int
	for _, d := range dirs {
		// The supervisors' pid files (supervisor.PidFile).
		files, _ := filepath.Glob(filepath.Join(d, "pids", "*.json"))
		for _, f := range files {
			var rec struct{ PID int }
			if b, err := os.ReadFile(f); err == nil && json.Unmarshal(b, &rec) == nil && rec.PID > 0 {
				pids = append(pids, rec.PID)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if resp, err := c.Cli.Get(ctx, c.Keys.Workers(), clientv3.WithPrefix()); err == nil {
		for _, kv := range resp.Kvs {
			var w meta.WorkerInfo
			if json.Unmarshal(kv.Value, &w) == nil && w.PID > 0 {
				pids = append(pids, w.PID)
			}
		}
	}
	return pids
}
