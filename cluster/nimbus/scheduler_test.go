package nimbus

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/squallstream/squall/cluster/internal/etcdtest"
	"github.com/squallstream/squall/cluster/meta"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestSchedulingLoop drives the leader's loop through etcd: placement,
// a supervisor gone while its worker lives (kept), node death (moved), a
// slot whose worker keeps failing (moved), kill (unassigned).
func TestSchedulingLoop(t *testing.T) {
	n, cli, ctx, put := schedulingNimbus(t, slog.LevelWarn)
	k := meta.New("/s")
	for _, id := range []string{"s1", "s2"} {
		put(k.Supervisor(id), meta.SupervisorInfo{ID: id, Ports: []int{1}})
	}
	for n.Candidate().Current() == nil {
		select {
		case <-n.Candidate().Changed():
		case <-time.After(10 * time.Second):
			t.Fatal("no leadership")
		}
	}
	spec, err := n.SubmitTopology(ctx, "t", 1, "fp", bytes.NewReader([]byte("code")))
	if err != nil {
		t.Fatal(err)
	}
	on := func(sup string) func(map[string]string) bool {
		return func(kv map[string]string) bool {
			var a meta.Assignment
			return json.Unmarshal([]byte(kv[k.Assignment("t")]), &a) == nil && len(a.Workers) == 1 && a.Workers[0].Supervisor == sup &&
				a.Artifact == spec.Artifact
		}
	}
	etcdtest.WaitFor(t, cli, k.Assignments(), 10*time.Second, "t on s1", on("s1"))
	_, rev := mustGet(t, n, k.Assignment("t"))

	// s1's supervisor goes, its worker lives on: the slot is kept.
	put(k.Worker("t", meta.Slot{Supervisor: "s1", Port: 1}), meta.WorkerInfo{Topology: "t", Slot: meta.Slot{Supervisor: "s1", Port: 1}})
	cli.Delete(ctx, k.Supervisor("s1"))
	put(k.Spec("other"), meta.Spec{Topology: "other", Workers: 1, Status: meta.Active}) // forces a pass, lands on s2
	etcdtest.WaitFor(t, cli, k.Assignments(), 10*time.Second, "other on s2", func(kv map[string]string) bool {
		_, ok := kv[k.Assignment("other")]
		return ok
	})
	if _, rev2 := mustGet(t, n, k.Assignment("t")); rev2 != rev {
		t.Fatal("t's assignment changed while its worker lived")
	}
	if err := n.Kill(ctx, "other"); err != nil {
		t.Fatal(err)
	}
	etcdtest.WaitFor(t, cli, k.Assignments(), 10*time.Second, "other unassigned", func(kv map[string]string) bool {
		_, ok := kv[k.Assignment("other")]
		return !ok
	})

	// Node death: the worker's key goes too. t moves to s2.
	cli.Delete(ctx, k.Worker("t", meta.Slot{Supervisor: "s1", Port: 1}))
	etcdtest.WaitFor(t, cli, k.Assignments(), 10*time.Second, "t moved to s2", on("s2"))

	// s1 is back; t's worker keeps failing to start on s2: moved to s1.
	put(k.Supervisor("s1"), meta.SupervisorInfo{ID: "s1", Ports: []int{1}})
	put(k.Crash("t", meta.Slot{Supervisor: "s2", Port: 1}), meta.Crash{Topology: "t", Slot: meta.Slot{Supervisor: "s2", Port: 1},
		Artifact: spec.Artifact, Failures: DefaultFailureLimit})
	etcdtest.WaitFor(t, cli, k.Assignments(), 10*time.Second, "t moved off the failing slot", on("s1"))
}

func mustGet(t *testing.T, n *Nimbus, key string) (string, int64) {
	t.Helper()
	resp, err := n.cfg.Client.Get(context.Background(), key)
	if err != nil || len(resp.Kvs) == 0 {
		t.Fatalf("get %s: %v", key, err)
	}
	return string(resp.Kvs[0].Value), resp.Kvs[0].ModRevision
}

// schedulingNimbus runs nimbus n1 on an embedded etcd under the prefix /s
// until the test ends, logging at level and above, and returns it, the
// etcd client, a context ended with the test, and a put of an encoded
// record.
func schedulingNimbus(t *testing.T, level slog.Level) (*Nimbus, *clientv3.Client, context.Context, func(key string, v any)) {
	t.Helper()
	cli := etcdtest.Client(t, etcdtest.Embedded(t))
	n, err := New(Config{Client: cli, Prefix: "/s", ID: "n1", CodeDir: t.TempDir(), TTL: time.Second,
		ScheduleDelay: 20 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { n.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	put := func(key string, v any) {
		t.Helper()
		if _, err := cli.Put(ctx, key, meta.Encode(v)); err != nil {
			t.Fatal(err)
		}
	}
	return n, cli, ctx, put
}
