package nimbus

import (
	"testing"

	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/cluster/schedule"
)

// TestAssignmentEpochs: an assignment keeps its epoch while its slots and
// artifact stay, whatever its status, and takes the next one otherwise.
func TestAssignmentEpochs(t *testing.T) {
	spec := meta.Spec{Topology: "wc", Artifact: "a1", Workers: 2, Status: meta.Active}
	units := executorsOf(spec)
	if len(units) != 2 {
		t.Fatalf("executorsOf(%d workers) = %v", spec.Workers, units)
	}
	two := schedule.Placement{units[0]: {Supervisor: "sA", Port: 1}, units[1]: {Supervisor: "sB", Port: 1}}
	first := toAssignment(spec, two, nil, 10)
	if first.Epoch != 10 || len(first.Workers) != 2 {
		t.Fatalf("first assignment %+v, want epoch 10 and two workers", first)
	}
	spec.Status = meta.Inactive
	if a := toAssignment(spec, two, &first, 20); a.Epoch != 10 || a.Status != meta.Inactive {
		t.Fatalf("status change: %+v, want epoch 10 kept", a)
	}
	moved := schedule.Placement{units[0]: {Supervisor: "sA", Port: 1}, units[1]: {Supervisor: "sC", Port: 1}}
	if a := toAssignment(spec, moved, &first, 20); a.Epoch != 20 {
		t.Fatalf("a moved worker: epoch %d, want 20", a.Epoch)
	}
	spec.Artifact = "a2"
	if a := toAssignment(spec, two, &first, 30); a.Epoch != 30 {
		t.Fatalf("a new artifact: epoch %d, want 30", a.Epoch)
	}
}
