package e2e

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/squallstream/squall/cluster/clustertest"
	"github.com/squallstream/squall/cluster/internal/etcdtest"
	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/internal/testenv"
)

var (
	loadprogOnce sync.Once
	loadprog     string // testdata/loadprog, built once
	loadprogErr  error
)

// buildLoadprog builds testdata/loadprog, a program whose topology
// "loaded" declares CPU and memory loads.
func buildLoadprog(t *testing.T) string {
	t.Helper()
	loadprogOnce.Do(func() {
		loadprog = filepath.Join(filepath.Dir(testprog), "loadprog")
		out, err := exec.Command("go", "build", "-o", loadprog, "./testdata/loadprog").CombinedOutput()
		if err != nil {
			loadprogErr = err
			loadprog = string(out)
		}
	})
	if loadprogErr != nil {
		t.Fatalf("building testdata/loadprog: %v\n%s", loadprogErr, loadprog)
	}
	return loadprog
}

// TestSubmitChecksTheDemandAgainstCapacity: `submit` of a topology whose
// streams declare loads (150% CPU and 64 MB for its one worker) computes
// its demand on the client and sends it; on a cluster whose only
// supervisor has 100% CPU the topology is refused as unscheduled, naming
// what is missing, in its assignment and in `list`; once a supervisor
// with 400% CPU registers, it runs there.
func TestSubmitChecksTheDemandAgainstCapacity(t *testing.T) {
	bin := buildLoadprog(t)
	eps := testenv.EtcdEndpoints(t)
	keys := meta.New("/" + testenv.UniqueName(t, "e2e"))
	cli := etcdtest.Client(t, eps)
	pc := clustertest.New(t, bin, cli, eps, keys, nil, "SQUALL_LOG_LEVEL=debug")
	pc.LogLines = 80
	c := &cluster{Cluster: pc, t: t, keys: keys, cli: cli, ttl: testTTL}
	c.nimbus("n1")
	withCPU := func(percent string) {
		c.Env = append(c.Env, "SQUALL_SUPERVISOR_CPU_CAPACITY="+percent, "SQUALL_SUPERVISOR_MEMORY_CAPACITY=4096")
	}
	withCPU("100")
	c.supervisor("small", t.TempDir(), 7300)
	c.leader(60*time.Second, "")
	etcdtest.WaitFor(t, cli, keys.Supervisors(), 30*time.Second, "supervisor small registered", func(kv map[string]string) bool {
		_, ok := kv[keys.Supervisor("small")]
		return ok
	})

	out, err := c.Run("submit", "loaded", "--timeout", "60s")
	if err != nil {
		t.Fatalf("submit: %v\n%s", err, out)
	}
	if !strings.Contains(out, "150% CPU and 64 MB") {
		t.Errorf("submit does not say what each worker needs:\n%s", out)
	}
	var refused meta.Assignment
	etcdtest.WaitFor(t, cli, keys.Assignment("loaded"), 30*time.Second, "loaded refused for want of CPU", func(kv map[string]string) bool {
		return json.Unmarshal([]byte(kv[keys.Assignment("loaded")]), &refused) == nil && strings.Contains(refused.Unscheduled, "missing 50% CPU")
	})
	if len(refused.Workers) != 0 || !strings.Contains(refused.Unscheduled, `topology "loaded" does not fit`) ||
		!strings.Contains(refused.Unscheduled, "150% CPU and 64 MB each") {
		t.Fatalf("refused as %q with workers %v", refused.Unscheduled, refused.Workers)
	}
	list, err := c.Run("list")
	if err != nil || !strings.Contains(list, "unscheduled") || !strings.Contains(list, "loaded: not scheduled: ") ||
		!strings.Contains(list, "missing 50% CPU") {
		t.Fatalf("list does not show the refusal (%v):\n%s", err, list)
	}
	if ws := c.workers("loaded"); len(ws) != 0 {
		t.Fatalf("a refused topology runs workers: %+v", ws)
	}

	withCPU("400")
	c.supervisor("large", t.TempDir(), 7400)
	c.committing("loaded", 60*time.Second, 0, "loaded commits on supervisor large", anyStatus)
	a, _ := c.assignment("loaded")
	if a.Unscheduled != "" || len(a.Workers) != 1 || a.Workers[0].Supervisor != "large" {
		t.Fatalf("assignment %+v: want one worker on large", a)
	}
}
