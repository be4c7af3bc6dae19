package ops

import "testing"

func TestCount(t *testing.T) {
	tests := []struct {
		name   string
		tuples []any // one tuple per value, field "x"
		want   int64
	}{
		{"empty is Zero", nil, 0},
		{"one", []any{"a"}, 1},
		{"several", []any{"a", 2, 3.5}, 3},
		{"nil values count", []any{nil, nil}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var c Count
			acc := c.Zero()
			for _, v := range tc.tuples {
				one, err := c.Init(tup("x", v))
				if err != nil || one != 1 {
					t.Fatalf("Init = %d, %v; want 1", one, err)
				}
				acc = c.Combine(acc, one)
			}
			if acc != tc.want {
				t.Fatalf("count = %d, want %d", acc, tc.want)
			}
		})
	}
	if got := (Count{}).Combine(40, 2); got != 42 {
		t.Fatalf("Combine(40, 2) = %d", got)
	}
}

// TestCountDeclaresItCountsTuples: Count is what trident.TupleCounter
// describes (Init 1 for any tuple, Combine adds), and says so, so that a
// persistent aggregation counts a batch's tuples without calling it.
func TestCountDeclaresItCountsTuples(t *testing.T) {
	if !(Count{}).CountsTuples() {
		t.Fatal("Count does not declare that it counts tuples")
	}
}
