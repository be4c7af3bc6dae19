package nimbus

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/squallstream/squall/cluster/internal/etcdtest"
	"github.com/squallstream/squall/cluster/meta"
)

// TestTopologyTooBigIsRefused: a topology whose workers need more than
// any supervisor has is not placed; its assignment says why (naming the
// topology, what a worker needs and the most a supervisor has free), the
// nimbus keeps scheduling the others, and once a supervisor large enough
// registers the topology runs there.
func TestTopologyTooBigIsRefused(t *testing.T) {
	_, cli, _, put := schedulingNimbus(t, slog.LevelError)
	k := meta.New("/s")
	put(k.Supervisor("small"), meta.SupervisorInfo{ID: "small", Ports: []int{1, 2}, Capacity: meta.Resources{CPU: 200, MemoryMB: 2048}})
	// Two workers; the largest share needs 300% CPU and 1024 MB.
	big := &meta.Demand{Executors: []meta.Resources{{CPU: 300, MemoryMB: 1024}, {CPU: 100, MemoryMB: 512}}}
	put(k.Spec("big"), meta.Spec{Topology: "big", Workers: 2, Status: meta.Active, Demand: big})
	put(k.Spec("plain"), meta.Spec{Topology: "plain", Workers: 1, Status: meta.Active})

	assignment := func(kv map[string]string, name string) (meta.Assignment, bool) {
		var a meta.Assignment
		v, ok := kv[k.Assignment(name)]
		return a, ok && json.Unmarshal([]byte(v), &a) == nil
	}
	var refused meta.Assignment
	etcdtest.WaitFor(t, cli, k.Assignments(), 10*time.Second, "big refused, plain placed", func(kv map[string]string) bool {
		a, ok := assignment(kv, "big")
		p, pok := assignment(kv, "plain")
		refused = a
		return ok && a.Unscheduled != "" && pok && len(p.Workers) == 1
	})
	if len(refused.Workers) != 0 {
		t.Fatalf("big was refused yet runs in %v", refused.Workers)
	}
	for _, want := range []string{`topology "big" does not fit`, "2 worker(s) of 300% CPU and 1024 MB each",
		"the most any supervisor has free is 200% CPU and 2048 MB", "missing 100% CPU"} {
		if !strings.Contains(refused.Unscheduled, want) {
			t.Errorf("refusal %q does not say %q", refused.Unscheduled, want)
		}
	}

	put(k.Supervisor("large"), meta.SupervisorInfo{ID: "large", Ports: []int{1, 2}, Capacity: meta.Resources{CPU: 800, MemoryMB: 8192}})
	etcdtest.WaitFor(t, cli, k.Assignments(), 10*time.Second, "big placed on large", func(kv map[string]string) bool {
		a, ok := assignment(kv, "big")
		if !ok || a.Unscheduled != "" || len(a.Workers) != 2 {
			return false
		}
		for _, w := range a.Workers {
			if w.Supervisor != "large" {
				return false
			}
		}
		return true
	})
}
