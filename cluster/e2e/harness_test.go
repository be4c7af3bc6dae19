// Package e2e runs the cluster's daemons as processes of a real program
// (cluster/internal/testprog, built once in TestMain) against the real
// three-member etcd cluster of scripts/services.sh, and kills them.
package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/squallstream/squall/cluster/clustertest"
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

// cluster is one test's cluster of testprog processes.
type cluster struct {
	*clustertest.Cluster
	t    *testing.T
	keys meta.Layout
	cli  *clientv3.Client
	ttl  time.Duration
}

func newCluster(t *testing.T, ttl time.Duration, env ...string) *cluster {
	eps := testenv.EtcdEndpoints(t)
	keys := meta.New("/" + testenv.UniqueName(t, "e2e"))
	cli := etcdtest.Client(t, eps)
	pc := clustertest.New(t, testprog, cli, eps, keys, nil, append([]string{"SQUALL_LOG_LEVEL=debug"}, env...)...)
	pc.LogLines = 80
	return &cluster{Cluster: pc, t: t, keys: keys, cli: cli, ttl: ttl}
}

// nimbus starts a nimbus on a free loopback port.
func (c *cluster) nimbus(name string) *clustertest.Proc { return c.Nimbus(name, c.ttl) }

// supervisor starts supervisor id on dir (reuse dir to restart it).
func (c *cluster) supervisor(id, dir string, firstPort int) *clustertest.Proc {
	return c.Supervisor(id, dir, firstPort, c.ttl)
}

func (c *cluster) submit(name string) {
	c.t.Helper()
	if out, err := c.Run("submit", name, "--timeout", "60s"); err != nil {
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
