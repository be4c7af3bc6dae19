package trident

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/squallstream/squall/trident/internal/plan"
)

// snapshotNodes prints every field of the declared nodes, of their ops
// and of their schemas (pointers and functions as addresses), so that a
// change to any of them shows against a later snapshot.
func snapshotNodes(t *Topology) []string {
	snaps := make([]string, len(t.nodes))
	for i, n := range t.nodes {
		snaps[i] = fmt.Sprintf("%+v op=%+v sch=%+v", *n, reflect.ValueOf(n.op).Elem().Interface(), *n.sch)
	}
	return snaps
}

// TestPlanningLeavesTheDeclarationAlone describes and plans each of
// planCases twice: the declared nodes stay as they were, the two graph
// descriptions share no node, and both plans print the same. (The
// planner's own purity is TestPlanIsPure in package plan.)
func TestPlanningLeavesTheDeclarationAlone(t *testing.T) {
	for _, c := range planCases {
		t.Run(c.name, func(t *testing.T) {
			tt := c.declare(t)
			before := snapshotNodes(tt)
			first, second := tt.graph(), tt.graph()
			a, b := plan.Print(plan.New(first)), plan.Print(plan.New(second))
			if after := snapshotNodes(tt); !slices.Equal(before, after) {
				t.Fatalf("planning changed the declared nodes:\nbefore %v\nafter  %v", before, after)
			}
			if a != b {
				t.Fatalf("planning twice printed differently:\nfirst:\n%s\nsecond:\n%s", a, b)
			}
			for _, n := range first {
				if slices.Contains(second, n) {
					t.Fatalf("node %v is in both graph descriptions", n)
				}
			}
		})
	}
}
