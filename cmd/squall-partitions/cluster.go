package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/internal/nemesis"
)

// clusterTTL is the lease TTL of the nimbuses, supervisors and workers:
// deaths and partitions are noticed within seconds (as in the process
// test of examples/roompresence).
const clusterTTL = 3 * time.Second

// cluster is one schedule's cluster: a fresh etcd cluster and daemons,
// and the workload's topic and keyspace, named after the seed.
type cluster struct {
	h       *harness
	dir     string
	seed    uint64
	daemons map[nemesis.Host]*daemon
	topic   string
	dlq     string
	space   string
}

func newCluster(h *harness, dir string, seed uint64) *cluster {
	id := fmt.Sprintf("p%d", seed)
	return &cluster{h: h, dir: dir, seed: seed, daemons: map[nemesis.Host]*daemon{},
		topic: "rp-" + id, dlq: "rp-" + id + "-dlq", space: "rp_" + id}
}

// workloadEnv is the supervisors' environment for the topology
// (docs/roompresence.md, "On the cluster"), with the answers of a few
// timeline writes lost after the write landed, as in the example's
// cluster test: packet faults rarely land between a batch's writes and
// its commit, and these make every schedule replay batches over their
// own writes.
func (c *cluster) workloadEnv() []string {
	return []string{"SQUALL_KAFKA_BROKERS=" + c.h.kafkaAddr(), "SQUALL_CASSANDRA_HOSTS=" + c.h.cassandraAddr(),
		"ROOMPRESENCE_KEYSPACE=" + c.space, "ROOMPRESENCE_TOPIC=" + c.topic, "ROOMPRESENCE_DLQ=" + c.dlq,
		"ROOMPRESENCE_PARTITIONS=4", "ROOMPRESENCE_BATCH_RECORDS=100", "ROOMPRESENCE_TASKS=2",
		fmt.Sprintf("ROOMPRESENCE_FAULT_WRITE=%g", c.h.cfg.lostReply), "ROOMPRESENCE_FAULT_LIMIT=3",
		fmt.Sprintf("ROOMPRESENCE_FAULT_SEED=%d", c.seed)}
}

func (c *cluster) add(host nemesis.Host, role nemesis.Role, env []string, args ...string) *daemon {
	d := &daemon{name: string(role) + " " + string(host), host: host, role: role, ns: c.h.net.ns(host), args: args,
		env: env, log: filepath.Join(c.dir, "logs", string(host)+"-"+string(role)+".log")}
	c.daemons[host] = d
	return d
}

// start starts the etcd members, the nimbuses and the supervisors, and
// submits the topology.
func (c *cluster) start(ctx context.Context, obs func() *observer) error {
	h := c.h
	if err := os.MkdirAll(filepath.Join(c.dir, "logs"), 0o755); err != nil {
		return err
	}
	var initial []string
	for _, e := range h.cluster.Etcd {
		initial = append(initial, fmt.Sprintf("%s=https://%s:2380", e, h.net.ips[e]))
	}
	ca := filepath.Join(h.certs, "ca", "ca.crt")
	for _, e := range h.cluster.Etcd {
		ip, certs := h.net.ips[e], filepath.Join(h.certs, "etcd-"+string(e))
		crt, key := filepath.Join(certs, "tls.crt"), filepath.Join(certs, "tls.key")
		c.add(e, nemesis.Etcd, nil, h.etcdBin, "-name", string(e), "-data-dir", filepath.Join(c.dir, string(e)),
			"-client-url", "https://"+ip+":2379", "-peer-url", "https://"+ip+":2380",
			"-initial-cluster", strings.Join(initial, ","), "-cluster-token", fmt.Sprintf("squall-partitions-%d", c.seed),
			"-cert-file", crt, "-key-file", key, "-trusted-ca-file", ca, "-client-cert-auth",
			"-peer-cert-file", crt, "-peer-key-file", key, "-peer-trusted-ca-file", ca, "-peer-client-cert-auth",
			"-log-level", "warn")
	}
	for _, e := range h.cluster.Etcd {
		if err := c.daemons[e].start(); err != nil {
			return err
		}
	}
	o := obs()
	if err := waitFor(ctx, time.Minute, "etcd to serve", func() bool {
		_, err := o.get(ctx, "/")
		return err == nil
	}); err != nil {
		return err
	}
	daemonEnv := func(host nemesis.Host) []string {
		return append(h.etcdEnv(host), "SQUALL_LOG_LEVEL=info")
	}
	for _, n := range h.cluster.Nimbus {
		addr := h.net.ips[n] + ":6627"
		c.add(n, nemesis.Nimbus, daemonEnv(n), h.bin, "cluster", "nimbus", "--listen", addr, "--advertise", addr,
			"--certs", filepath.Join(h.certs, string(n)), "--data-dir", filepath.Join(c.dir, string(n)),
			"--ttl", clusterTTL.String(), "--replication", "1")
	}
	for _, w := range h.cluster.Workers {
		ip := h.net.ips[w]
		c.add(w, nemesis.Supervisor, append(daemonEnv(w), c.workloadEnv()...), h.bin, "cluster", "supervisor",
			"--id", string(w), "--worker-host", ip, "--listen", ip+":0", "--data-dir", filepath.Join(c.dir, string(w)),
			"--certs", filepath.Join(h.certs, string(w)), "--ttl", clusterTTL.String(), "--slots", "1",
			"--first-port", "6700", "--min-uptime", "2s", "--grace", "5s")
	}
	for _, hs := range [][]nemesis.Host{h.cluster.Nimbus, h.cluster.Workers} {
		for _, x := range hs {
			if err := c.daemons[x].start(); err != nil {
				return err
			}
		}
	}
	if err := waitFor(ctx, time.Minute, "a leader nimbus", func() bool {
		_, err := o.leaderHost(ctx, h.net)
		return err == nil
	}); err != nil {
		return err
	}
	if err := waitFor(ctx, time.Minute, "three supervisors", func() bool {
		resp, err := o.get(ctx, meta.New("/squall").Supervisors(), clientv3.WithPrefix(), clientv3.WithCountOnly())
		return err == nil && resp.Count == int64(len(h.cluster.Workers))
	}); err != nil {
		return err
	}
	out, err := c.client(ctx, "cluster", "submit", topologyName, "--workers", "2", "--timeout", "2m",
		"--certs", filepath.Join(h.certs, "admin"))
	if err != nil {
		return fmt.Errorf("submit: %w: %s", err, out)
	}
	return nil
}

// client runs a command of the program in the observer's namespace with
// the etcd and service settings (the client commands, gen, verify).
func (c *cluster) client(ctx context.Context, args ...string) (string, error) {
	h := c.h
	cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", h.net.ns(obsHost), h.bin}, args...)...)
	cmd.Env = append(append(os.Environ(), h.etcdEnv(obsHost)...), "SQUALL_KAFKA_BROKERS="+h.kafkaAddr(),
		"SQUALL_CASSANDRA_HOSTS="+h.cassandraAddr())
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// stop stops every daemon and every worker (the processes left in the
// hosts' namespaces).
func (c *cluster) stop(ctx context.Context) {
	for _, d := range c.daemons {
		d.resume()
	}
	for _, w := range c.h.cluster.Workers {
		c.h.net.signalHost(ctx, w, syscall.SIGCONT) // frozen workers too
		c.h.net.signalHost(ctx, w, syscall.SIGKILL)
	}
	for _, d := range c.daemons {
		d.kill()
	}
	for _, hs := range [][]nemesis.Host{c.h.cluster.Etcd, c.h.cluster.Nimbus, c.h.cluster.Workers} {
		for _, x := range hs {
			c.h.net.signalHost(ctx, x, syscall.SIGKILL)
		}
	}
}

func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "\n")
}

// waitFor polls cond every 200ms until it holds or timeout passes.
func waitFor(ctx context.Context, timeout time.Duration, what string, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no %s within %v", what, timeout)
		}
		sleep(ctx, 200*time.Millisecond)
	}
	return nil
}
