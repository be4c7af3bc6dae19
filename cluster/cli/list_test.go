package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/cluster/nimbus"
)

// TestListShowsWhyATopologyIsNotScheduled: a topology the scheduler
// refused (too big for every supervisor) shows as unscheduled, with the
// scheduler's reason under the table; a placed one shows its slots.
func TestListShowsWhyATopologyIsNotScheduled(t *testing.T) {
	why := "wc needs 2 worker(s) of 300% CPU and 1024 MB each; worker 2 of them fits nowhere (missing 100% CPU)"
	ts := []nimbus.TopologyInfo{
		{Spec: meta.Spec{Topology: "wc", Status: "active", Workers: 2}, Assignment: &meta.Assignment{Unscheduled: why}},
		{Spec: meta.Spec{Topology: "rooms", Status: "active", Workers: 1},
			Assignment: &meta.Assignment{Workers: []meta.Worker{{Slot: meta.Slot{Supervisor: "s1", Port: 6700}}}}},
	}
	var out bytes.Buffer
	if err := writeList(&out, ts); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 || !strings.Contains(lines[1], "unscheduled") || !strings.Contains(lines[2], "s1:6700") ||
		lines[3] != "wc: not scheduled: "+why {
		t.Fatalf("list printed:\n%s", out.String())
	}
}
