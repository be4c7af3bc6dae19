package trident

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
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

// TestPlanIsPure plans each of planCases twice: both plans print the
// same, share no groups, and leave the declared nodes as they were.
func TestPlanIsPure(t *testing.T) {
	for _, c := range planCases {
		t.Run(c.name, func(t *testing.T) {
			tt := c.declare(t)
			before := snapshotNodes(tt)
			first := tt.plan()
			if after := snapshotNodes(tt); !slices.Equal(before, after) {
				t.Fatalf("planning changed the declared nodes:\nbefore %v\nafter  %v", before, after)
			}
			second := tt.plan()
			if after := snapshotNodes(tt); !slices.Equal(before, after) {
				t.Fatalf("planning again changed the declared nodes:\nbefore %v\nafter  %v", before, after)
			}
			if a, b := printPlan(first), printPlan(second); a != b {
				t.Fatalf("planning twice printed differently:\nfirst:\n%s\nsecond:\n%s", a, b)
			}
			for _, g := range first.groups {
				if slices.Contains(second.groups, g) {
					t.Fatalf("group %s is shared by both plans", g.name)
				}
			}
		})
	}
}
