package exec

import (
	"slices"
	"testing"
)

// TestProjection: a projection returns the values at its positions, as
// ProjectValues does: a capped view for consecutive positions (an append
// does not write into the tuple), a copy for others.
func TestProjection(t *testing.T) {
	values := []any{"a", "b", "c", "d"}
	for _, idx := range [][]int{nil, {0}, {2}, {1, 2, 3}, {3, 1}, {0, 2}, {2, 2}} {
		p := NewProjection(idx)
		got := p.Of(values)
		want := ProjectValues(values, idx)
		if !slices.Equal(got, want) || len(got) != len(idx) {
			t.Fatalf("%v: Of = %v, ProjectValues = %v", idx, got, want)
		}
		if len(got) != cap(got) {
			t.Fatalf("%v: len %d cap %d: an append would write into the tuple", idx, len(got), cap(got))
		}
		_ = append(got, "x")
		if !slices.Equal(values, []any{"a", "b", "c", "d"}) {
			t.Fatalf("%v: appending to the projection changed the tuple: %v", idx, values)
		}
		if len(idx) > 1 && !consecutive(idx) {
			got[0] = "changed"
			if values[idx[0]] == "changed" {
				t.Fatalf("%v: not a copy", idx)
			}
		}
	}
}
