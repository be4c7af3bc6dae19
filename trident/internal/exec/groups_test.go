package exec

import (
	"testing"

	"github.com/squallstream/squall/state"
)

func TestGroupIndex(t *testing.T) {
	gi := NewGroupIndex[string]()
	made := 0
	find := func(values ...any) *string {
		t.Helper()
		g, _, err := gi.Find(values, []int{0}, func(group []any, key state.Key) (*string, error) {
			made++
			s := key.String()
			return &s, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	a, b := find("5"), find("5")
	if a != b || made != 1 {
		t.Fatalf("the same word made %d groups", made)
	}
	// int 5 and int64 5 have one state key: one group, whichever comes first.
	i, i64 := find(5), find(int64(5))
	if i != i64 || i == a || made != 2 {
		t.Fatalf("int and int64 5: groups %p %p (string %p), %d made; want one group apart from \"5\"", i, i64, a, made)
	}
	if find(int64(5)) != i || len(gi.Order) != 2 {
		t.Fatalf("order %d groups, want 2", len(gi.Order))
	}
	// A key of two values goes through its encoding.
	g2, _, err := gi.Find([]any{"r", int64(1)}, []int{0, 1}, func([]any, state.Key) (*string, error) { s := "pair"; return &s, nil })
	if err != nil || *g2 != "pair" || len(gi.Order) != 3 {
		t.Fatalf("pair: %v %v, %d groups", g2, err, len(gi.Order))
	}
}
