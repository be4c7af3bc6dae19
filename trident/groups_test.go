package trident

import "testing"

func TestProjectView(t *testing.T) {
	values := []any{"a", "b", "c", "d"}
	sch := newSchema(Fields{"x", "y"})
	p := project(values, []int{1, 2}, sch)
	if p.String("x") != "b" || p.String("y") != "c" {
		t.Fatalf("projected %v", p.Values())
	}
	_ = append(p.Values(), "z") // must not write into values[3]
	if values[3] != "d" {
		t.Fatal("an append to a projection changed its parent")
	}
	q := project(values, []int{2, 0}, sch)
	if q.String("x") != "c" || q.String("y") != "a" {
		t.Fatalf("projected %v", q.Values())
	}
}
