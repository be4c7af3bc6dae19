package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/squallstream/squall/cluster/internal/etcdtest"
	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/cluster/pki"
)

// TestTopologyAcrossWorkerProcesses runs wordcount in two worker processes
// on two supervisors: the master coordinator's share writes the status,
// and its batches need the other share (stopping that process stops the
// commits). A restart of the other share keeps the owner generation; a
// restart of the master's share acquires a new one, and the other share
// follows it; a node's death moves its share to a new slot in a new
// epoch, and the topology commits again.
func TestTopologyAcrossWorkerProcesses(t *testing.T) {
	c, sups, _ := start3(t)
	if out, err := c.Run("submit", "wordcount", "--workers", "2", "--timeout", "60s"); err != nil {
		t.Fatalf("submit: %v\n%s", err, out)
	}
	st := c.committing("wordcount", 60*time.Second, 0, "first commits", anyStatus)
	a, _ := c.assignment("wordcount")
	if len(a.Workers) != 2 || a.Workers[0].Supervisor == a.Workers[1].Supervisor {
		t.Fatalf("assignment %+v: want two workers on two supervisors", a.Workers)
	}
	if share := a.Share(st.Slot); share != 0 {
		t.Fatalf("the status comes from share %d (slot %v), want the master's share 0", share, st.Slot)
	}
	other := c.registered("wordcount", a.Workers[1].Slot, a.Epoch, 0)

	// The batches cross: with the other share stopped, nothing commits.
	if err := syscall.Kill(other.PID, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // batches in flight settle
	stalled := c.status("wordcount", 10*time.Second, "status", anyStatus)
	time.Sleep(2 * time.Second)
	if now := c.status("wordcount", 10*time.Second, "status", anyStatus); now.Committed > stalled.Committed+1 {
		t.Errorf("committed %d → %d with share 1 stopped: the batches do not need it", stalled.Committed, now.Committed)
	}
	if err := syscall.Kill(other.PID, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	st = c.committing("wordcount", 60*time.Second, stalled.Committed, "commits once share 1 continues", anyStatus)

	// Share 1 restarts in place and keeps the generation.
	syscall.Kill(other.PID, syscall.SIGKILL)
	other = c.registered("wordcount", other.Slot, a.Epoch, other.PID)
	st = c.committing("wordcount", 60*time.Second, st.Committed, "commits after share 1's restart",
		func(s meta.Status) bool { return s.PID == st.PID })
	if st.Generation != c.generation("wordcount").Generation {
		t.Fatalf("status generation %d, recorded %d", st.Generation, c.generation("wordcount").Generation)
	}
	gen := st.Generation

	// The master's share restarts with a new generation; share 1 follows.
	syscall.Kill(st.PID, syscall.SIGKILL)
	st = c.committing("wordcount", 60*time.Second, st.Committed, "commits after the master share's restart",
		func(s meta.Status) bool { return s.Generation > gen })
	if g := c.generation("wordcount"); g.Generation != st.Generation || g.Epoch != a.Epoch {
		t.Fatalf("generation record %+v, want generation %d in epoch %d", g, st.Generation, a.Epoch)
	}
	other = c.registered("wordcount", other.Slot, a.Epoch, other.PID)

	// A node dies: its share moves, in a new epoch.
	id := other.Slot.Supervisor
	sups[id].Kill9(t)
	syscall.Kill(-other.PID, syscall.SIGKILL)
	syscall.Kill(other.PID, syscall.SIGKILL)
	st = c.committing("wordcount", 90*time.Second, st.Committed, "commits after the node's death",
		func(s meta.Status) bool { return s.Generation > gen })
	a2, _ := c.assignment("wordcount")
	if a2.Epoch <= a.Epoch || slices.ContainsFunc(a2.Workers, func(w meta.Worker) bool { return w.Supervisor == id }) {
		t.Fatalf("assignment %+v (epoch %d, was %d) still on the dead supervisor %s or in the old epoch", a2.Workers, a2.Epoch, a.Epoch, id)
	}
	if g := c.generation("wordcount"); g.Epoch != a2.Epoch {
		t.Fatalf("generation record %+v is not of the new epoch %d", g, a2.Epoch)
	}
}

// TestWorkersThatBuildAnotherTopologyRefuseToRun: a worker whose Build
// gives another plan than share 0's exits with an error naming the
// mismatch, rather than placing executors its peers do not expect.
func TestWorkersThatBuildAnotherTopologyRefuseToRun(t *testing.T) {
	c, _, dirs := start3(t, "TESTPROG_WIDE_ON=sB")
	if out, err := c.Run("submit", "wordcount", "--workers", "2", "--timeout", "60s"); err != nil {
		t.Fatalf("submit: %v\n%s", err, out)
	}
	if err := eventually(60*time.Second, func() bool {
		for _, d := range dirs {
			logs, _ := filepath.Glob(filepath.Join(d, "workers", "*", "worker.*"))
			for _, l := range logs {
				if b, _ := os.ReadFile(l); strings.Contains(string(b), "built another topology than share 0") {
					return true
				}
			}
		}
		return false
	}); err != nil {
		t.Fatal("no worker reported the plan mismatch")
	}
}

// TestWorkersPublishTheirErrors: an error a worker reports reaches etcd
// under its lease, with its slot, and the nimbus's list shows it.
func TestWorkersPublishTheirErrors(t *testing.T) {
	c, _, _ := start3(t, "TESTPROG_REPORT=1")
	c.submit("wordcount")
	st := c.committing("wordcount", 60*time.Second, 0, "commits after the reported error", anyStatus)
	etcdtest.WaitFor(t, c.cli, c.keys.ErrorReports(), 30*time.Second, "the worker's error report", func(kv map[string]string) bool {
		var e meta.WorkerErrors
		err := json.Unmarshal([]byte(kv[c.keys.ErrorReport("wordcount", st.Slot)]), &e)
		return err == nil && e.PID == st.PID && len(e.Errors) > 0 && strings.Contains(e.Errors[0].Error, "testprog: a reported error")
	})
	out, err := c.Run("list", "--json")
	if err != nil || !strings.Contains(out, "testprog: a reported error") {
		t.Fatalf("list --json: %v\n%s", err, out)
	}

	// The worker's own monitor: read-only, with its log.
	ws := c.workers("wordcount")
	if len(ws) != 1 || ws[0].MonitorURL == "" {
		t.Fatalf("workers %+v: want one with a monitor", ws)
	}
	// Over TLS with the worker's certificate, to the admin.
	admin := c.client("admin", pki.Worker)
	get := func(method, path string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, ws[0].MonitorURL+path, nil)
		resp, err := admin.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("GET", "/api/v1/topologies/wordcount"); code != http.StatusOK || !strings.Contains(body, "testprog: a reported error") {
		t.Fatalf("the worker's monitor: %d %s", code, body)
	}
	if code, body := get("POST", "/api/v1/topologies/wordcount/kill"); code != http.StatusForbidden {
		t.Fatalf("a kill on the worker's monitor: %d %s, want 403", code, body)
	}
	if code, body := get("GET", "/api/v1/logs?q=worker:+running"); code != http.StatusOK || !strings.Contains(body, "worker: running") {
		t.Fatalf("the worker's log through its monitor: %d %s", code, body)
	}
	// The topology's own records reach the worker's log though Build set
	// no logger.
	if code, body := get("GET", "/api/v1/logs?q=error+reported"); code != http.StatusOK || !strings.Contains(body, "a reported error") {
		t.Fatalf("the topology's log records in the worker's log: %d %s", code, body)
	}
}

// TestMemoryStateRefusedOnTheCluster: a topology whose state is in
// memory only (not opted in with AllowVolatileState) does not run on the
// cluster: its worker halts with an error that says why and what to do.
func TestMemoryStateRefusedOnTheCluster(t *testing.T) {
	c := newCluster(t, 2*time.Second, "TESTPROG_DURABLE=0")
	c.nimbus("n1")
	dir := t.TempDir()
	c.supervisor("s1", dir, 8100)
	c.leader(60*time.Second, "")
	c.submit("wordcount")
	if err := eventually(60*time.Second, func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, "workers", "8100", "worker.log"))
		return strings.Contains(string(b), "AllowVolatileState")
	}); err != nil {
		t.Fatalf("the worker did not refuse its memory state: %v", err)
	}
	if st, err := c.cli.Get(context.Background(), c.keys.Status("wordcount")); err == nil && len(st.Kvs) > 0 {
		t.Fatalf("a topology with memory state committed: %s", st.Kvs[0].Value)
	}
}
