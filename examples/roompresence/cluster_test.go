package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/squallstream/squall/cluster/clustertest"
	"github.com/squallstream/squall/cluster/leader"
	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/internal/testenv"
)

// mutantVar, set to 1, makes TestClusterThroughFaults build the program
// with the tag roompresence_mutant (timelines that count a replay again):
// the test must then fail with mismatches. It is the test's mutation
// check, run by hand.
const mutantVar = "ROOMPRESENCE_CLUSTER_MUTANT"

// clusterTTL is the lease TTL of the test's nimbuses, supervisors and
// workers: node deaths and leader failovers are noticed within seconds.
const clusterTTL = 3 * time.Second

// TestClusterThroughFaults runs room presence on a cluster of processes
// of the example's own binary (two nimbuses and three supervisors on the
// real three-member etcd, its workers reading real Kafka and writing real
// Cassandra, coordinated through etcd) and, while the topology consumes
// the events written in parts, kills with SIGKILL each of its two
// workers (restarted in place), the leader nimbus (the standby leads, the assignment and the
// worker untouched), the worker's supervisor (the worker runs on; the
// restarted supervisor adopts it) and a whole node, supervisor and worker
// (reassigned to another supervisor). Each worker also injects a few
// retryable failures (replays). Once every event is committed, verify
// must find 0 mismatches.
func TestClusterThroughFaults(t *testing.T) {
	endpoints := testenv.EtcdEndpoints(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	mutant := os.Getenv(mutantVar) == "1"
	bin := buildProgram(t, mutant)
	o, kio := realServices(ctx, t, "rpc")
	name := o.keyspace

	c := newRPCluster(t, bin, endpoints, "/"+name,
		kafkaVar+"="+o.kafka, cassandraVar+"="+o.cassandra,
		clusterEnvPrefix+"KEYSPACE="+o.keyspace, clusterEnvPrefix+"TOPIC="+o.topic, clusterEnvPrefix+"DLQ="+o.dlq,
		clusterEnvPrefix+"PARTITIONS="+strconv.Itoa(o.partitions), clusterEnvPrefix+"BATCH_RECORDS=100",
		clusterEnvPrefix+"TASKS=2",
		// A few retryable failures too (up to 4 of each kind per worker
		// process): in the steps, and after writes of the timelines
		// landed, so that batches are replayed over their own writes.
		clusterEnvPrefix+"FAULT_RETRY=0.005", clusterEnvPrefix+"FAULT_WRITE=0.1", clusterEnvPrefix+"FAULT_LIMIT=4")
	c.nimbus("n1")
	c.leader(60*time.Second, "")
	c.nimbus("n2")
	for i, id := range []string{"sA", "sB", "sC"} {
		c.supervisor(id, t.TempDir(), 6700+100*i)
	}
	if out, err := c.Run("submit", "roompresence", "--workers", "2", "--timeout", "90s"); err != nil {
		t.Fatalf("submit: %v\n%s", err, out)
	}

	gen := generator(t, genFlags{events: 20_000, rooms: 12, visits: 10, day: "2026-01-05", seed: 7, malformed: 0.002, outOfOrder: 0.05})
	const parts = 5
	chunk := gen.Estimate()/parts + 1
	produced := 0
	// write writes the next part of the day and waits until the topology
	// has committed some of it (so the fault that follows hits a topology
	// consuming).
	write := func(what string) {
		t.Helper()
		var before int64
		c.waitFor(time.Minute, "the spout's mirrored offsets", func() bool {
			before = c.mirrored(ctx, kio, o.topic)
			return before >= 0
		})
		n, err := kio.produceN(ctx, o.topic, gen, chunk, func(int) {})
		produced += n
		if err != nil {
			t.Fatal(err)
		}
		var total int64
		c.waitFor(3*time.Minute, "commits of the part before "+what, func() bool {
			total = c.mirrored(ctx, kio, o.topic)
			return total > before
		})
		_, end, err := kio.bounds(ctx, o.topic)
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		for _, e := range end {
			sum += e
		}
		t.Logf("%d records written; %d of %d committed when %s", produced, total, sum, what)
	}

	// 1. The workers: the second share's, then the master's; each is
	// restarted in place, the master's with a newer generation.
	write("killing the second share's worker")
	st := c.status(60*time.Second, "a worker's status", func(meta.Status) bool { return true })
	a, rev := c.assignment()
	if len(a.Workers) != 2 || a.Share(st.Slot) != 0 {
		t.Fatalf("assignment %+v, status from %v: want two workers, the status from share 0", a.Workers, st.Slot)
	}
	second := c.worker(a.Workers[1].Slot)
	if err := syscall.Kill(second.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	c.waitFor(90*time.Second, "the second share restarted", func() bool {
		w := c.worker(second.Slot)
		return w.PID != 0 && w.PID != second.PID
	})
	write("killing the master's worker")
	st = c.status(60*time.Second, "a worker's status", func(s meta.Status) bool { return s.Committed > st.Committed })
	if err := syscall.Kill(st.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	st2 := c.status(90*time.Second, "the restarted worker committing", func(s meta.Status) bool {
		return s.PID != st.PID && s.Committed > st.Committed
	})
	if st2.Slot != st.Slot || st2.Generation <= st.Generation {
		t.Errorf("worker restart: slot %v → %v, generation %d → %d; want the same slot, a newer generation",
			st.Slot, st2.Slot, st.Generation, st2.Generation)
	}
	if _, rev2 := c.assignment(); rev2 != rev {
		t.Errorf("a worker restart rewrote the assignment (rev %d → %d)", rev, rev2)
	}

	// 2. The leader nimbus: the standby leads; assignment and worker stay.
	write("killing the leader nimbus")
	c.waitFor(60*time.Second, "the code on both nimbuses", func() bool { return c.count(c.prefix+"/code/") >= 2 })
	old := c.leader(10*time.Second, "")
	c.leaderProc(old).Kill9(t)
	newLeader := c.leader(60*time.Second, old)
	st3 := c.status(60*time.Second, "commits under the new leader", func(s meta.Status) bool { return s.Committed > st2.Committed })
	if st3.PID != st2.PID {
		t.Errorf("the worker changed with the leader (pid %d → %d)", st2.PID, st3.PID)
	}
	if _, rev2 := c.assignment(); rev2 != rev {
		t.Errorf("the new leader %s rewrote the assignment (rev %d → %d)", newLeader, rev, rev2)
	}
	if out, err := c.Run("list"); err != nil || !strings.Contains(out, "roompresence") {
		t.Errorf("list under the new leader: %v\n%s", err, out)
	}

	// 3. The worker's supervisor: the worker commits on past the
	// supervisor's lease; the restarted supervisor adopts it.
	write("killing the worker's supervisor")
	id := st3.Slot.Supervisor
	sup := c.supervisors[id]
	sup.proc.Kill9(t)
	killed := time.Now()
	st4 := c.status(60*time.Second, "commits after the supervisor's lease expired", func(s meta.Status) bool {
		return s.Time.After(killed.Add(2*clusterTTL+time.Second)) && s.Committed > st3.Committed
	})
	if st4.PID != st3.PID {
		t.Errorf("the worker changed after its supervisor's death (pid %d → %d)", st3.PID, st4.PID)
	}
	if _, rev2 := c.assignment(); rev2 != rev {
		t.Errorf("the assignment was rewritten after the supervisor's death (rev %d → %d)", rev, rev2)
	}
	c.supervisor(id, sup.dir, sup.firstPort)
	c.waitFor(60*time.Second, "the restarted supervisor registered", func() bool { return c.count(c.keys.Supervisor(id)) == 1 })

	// 4. The node: supervisor and worker; reassigned elsewhere.
	write("killing a node")
	st5 := c.status(30*time.Second, "a worker's status", func(s meta.Status) bool { return s.PID == st4.PID })
	c.supervisors[id].proc.Kill9(t)
	syscall.Kill(-st5.PID, syscall.SIGKILL)
	syscall.Kill(st5.PID, syscall.SIGKILL)
	nodeKilled := time.Now()
	st6 := c.status(90*time.Second, "commits on another supervisor", func(s meta.Status) bool {
		return s.Slot.Supervisor != id && s.PID != st5.PID && s.Committed > st5.Committed
	})
	t.Logf("node SIGKILL → reassigned to %v, committing after %v", st6.Slot, time.Since(nodeKilled).Round(10*time.Millisecond))

	// The rest of the day, then caught up: every record committed.
	if _, err := kio.produceN(ctx, o.topic, gen, -1, func(int) {}); err != nil {
		t.Fatal(err)
	}
	c.waitFor(4*time.Minute, "every record committed", func() bool { return c.caughtUp(ctx, kio, o.topic) })

	store, err := o.openStore(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var out bytes.Buffer
	err = verify(ctx, &o, store, &out)
	t.Logf("%s", out.String())
	if err != nil {
		t.Fatalf("verify after the faults: %v", err)
	}
	if !strings.Contains(out.String(), "verify: 0 mismatches") {
		t.Fatal("verify did not report 0 mismatches")
	}
}

// buildProgram builds the example's binary (the mutant with mutant).
func buildProgram(t *testing.T, mutant bool) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "roompresence")
	args := []string{"build", "-o", bin}
	if mutant {
		args = append(args, "-tags", "roompresence_mutant")
	}
	out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
	if err != nil {
		t.Fatalf("building the program: %v\n%s", err, out)
	}
	return bin
}

// rpCluster is the test's cluster: its daemons, as processes of bin.
type rpCluster struct {
	*clustertest.Cluster
	t           *testing.T
	cli         *clientv3.Client
	keys        meta.Layout
	prefix      string
	supervisors map[string]*rpSupervisor
}

type rpSupervisor struct {
	proc      *clustertest.Proc
	dir       string
	firstPort int
}

func newRPCluster(t *testing.T, bin string, endpoints []string, prefix string, env ...string) *rpCluster {
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() }) // after the cluster's own cleanup
	keys := meta.New(prefix)
	pc := clustertest.New(t, bin, cli, endpoints, keys, []string{"cluster"}, append([]string{"SQUALL_LOG_LEVEL=info"}, env...)...)
	pc.LogLines = 30
	return &rpCluster{Cluster: pc, t: t, cli: cli, keys: keys, prefix: prefix, supervisors: map[string]*rpSupervisor{}}
}

func (c *rpCluster) nimbus(name string) *clustertest.Proc { return c.Nimbus(name, clusterTTL) }

// supervisor starts supervisor id on dir (the same dir restarts it).
func (c *rpCluster) supervisor(id, dir string, firstPort int) {
	p := c.Supervisor(id, dir, firstPort, clusterTTL)
	c.supervisors[id] = &rpSupervisor{proc: p, dir: dir, firstPort: firstPort}
}

// waitFor polls cond every 200ms until it holds, failing the test after
// timeout.
func (c *rpCluster) waitFor(timeout time.Duration, what string, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			c.t.Fatalf("no %s within %v", what, timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (c *rpCluster) get(key string, opts ...clientv3.OpOption) *clientv3.GetResponse {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.cli.Get(ctx, key, opts...)
	if err != nil {
		return nil
	}
	return resp
}

func (c *rpCluster) count(prefix string) int {
	resp := c.get(prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if resp == nil {
		return -1
	}
	return int(resp.Count)
}

// status waits until the topology's status satisfies cond.
func (c *rpCluster) status(timeout time.Duration, what string, cond func(meta.Status) bool) meta.Status {
	c.t.Helper()
	var st meta.Status
	c.waitFor(timeout, what, func() bool {
		resp := c.get(c.keys.Status("roompresence"))
		if resp == nil || len(resp.Kvs) == 0 {
			return false
		}
		var s meta.Status
		if json.Unmarshal(resp.Kvs[0].Value, &s) != nil {
			return false
		}
		st = s
		return cond(s)
	})
	return st
}

// worker reads the registration of the worker of slot (zero if none).
func (c *rpCluster) worker(slot meta.Slot) meta.WorkerInfo {
	var w meta.WorkerInfo
	if resp := c.get(c.keys.Worker("roompresence", slot)); resp != nil && len(resp.Kvs) == 1 {
		json.Unmarshal(resp.Kvs[0].Value, &w)
	}
	return w
}

// assignment reads the topology's assignment and its mod revision.
func (c *rpCluster) assignment() (meta.Assignment, int64) {
	c.t.Helper()
	resp := c.get(c.keys.Assignment("roompresence"))
	if resp == nil || len(resp.Kvs) == 0 {
		c.t.Fatal("no assignment of roompresence")
	}
	var a meta.Assignment
	if err := json.Unmarshal(resp.Kvs[0].Value, &a); err != nil {
		c.t.Fatal(err)
	}
	return a, resp.Kvs[0].ModRevision
}

// leader waits for a leader nimbus other than not and returns its ID.
func (c *rpCluster) leader(timeout time.Duration, not string) string {
	c.t.Helper()
	var id string
	c.waitFor(timeout, "a leader nimbus other than "+strconv.Quote(not), func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var err error
		id, err = leader.LeaderID(ctx, c.cli, c.keys.Leader())
		return err == nil && id != "" && id != not
	})
	return id
}

// leaderProc returns the nimbus process whose ID is id.
func (c *rpCluster) leaderProc(id string) *clustertest.Proc {
	c.t.Helper()
	for _, p := range c.Procs() {
		if strings.HasPrefix(p.Name, "nimbus") && strings.Contains(p.Logs.String(), "id="+id+" ") {
			select {
			case <-p.Done:
			default:
				return p
			}
		}
	}
	c.t.Fatalf("no process of nimbus %s", id)
	return nil
}

// mirrored returns the sum of the offsets the topology's spout mirrors to
// its consumer group (where its committed batches end): it grows only
// after commits. It is -1 when they cannot be read.
func (c *rpCluster) mirrored(ctx context.Context, kio *kafkaIO, topic string) int64 {
	got, err := committedOffsets(ctx, kio, topic)
	if err != nil {
		return -1
	}
	var sum int64
	for _, o := range got {
		sum += max(o, 0)
	}
	return sum
}

// caughtUp reports whether the committed batches reach the end of every
// partition of topic.
func (c *rpCluster) caughtUp(ctx context.Context, kio *kafkaIO, topic string) bool {
	_, end, err := kio.bounds(ctx, topic)
	if err != nil {
		return false
	}
	got, err := committedOffsets(ctx, kio, topic)
	if err != nil {
		return false
	}
	for p, e := range end {
		if e > 0 && got[p] < e {
			return false
		}
	}
	return true
}

// committedOffsets reads the spout's mirror: the consumer group named
// after the topology.
func committedOffsets(ctx context.Context, kio *kafkaIO, topic string) (map[int]int64, error) {
	ids, err := kio.partitions(ctx, topic)
	if err != nil {
		return nil, err
	}
	resp, err := kio.client.OffsetFetch(ctx, &kafkago.OffsetFetchRequest{GroupID: "roompresence", Topics: map[string][]int{topic: ids}})
	if err != nil {
		return nil, err
	}
	if resp.Error != nil {
		return nil, resp.Error
	}
	out := map[int]int64{}
	for _, p := range resp.Topics[topic] {
		if p.Error != nil {
			return nil, fmt.Errorf("partition %d: %w", p.Partition, p.Error)
		}
		out[p.Partition] = p.CommittedOffset
	}
	return out, nil
}
