package window

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// items makes items at the given positions, with data "p<pos>".
func items(pos ...int64) []Item {
	out := make([]Item, len(pos))
	for i, p := range pos {
		out[i] = Item{Pos: p, Data: []byte(fmt.Sprintf("p%d", p))}
	}
	return out
}

// named makes items with the given data and no position.
func named(data ...string) []Item {
	out := make([]Item, len(data))
	for i, d := range data {
		out[i] = Item{Data: []byte(d)}
	}
	return out
}

// show prints fired windows as "[s,e):a,b" joined by spaces.
func show(ws []Window) string {
	var parts []string
	for _, w := range ws {
		var ds []string
		for _, it := range w.Items {
			ds = append(ds, string(it.Data))
		}
		parts = append(parts, fmt.Sprintf("[%d,%d):%s", w.Start, w.End, strings.Join(ds, ",")))
	}
	return strings.Join(parts, " ")
}

type step struct {
	batch []Item
	now   int64
	fired string // show() of the fired windows
	late  int    // items dropped as late in this batch
	kept  int    // items kept after the batch
	wm    int64  // watermark after the batch
}

func TestAdvance(t *testing.T) {
	tests := []struct {
		name  string
		spec  Spec
		steps []step
	}{
		{"tumbling count", Spec{Mode: Count, Length: 3, Slide: 3}, []step{
			{batch: named("b", "a"), fired: "", kept: 2, wm: 2},
			{batch: named("c", "e", "d"), fired: "[0,3):a,b,c", kept: 2, wm: 5},
			{batch: nil, fired: "", kept: 2, wm: 5},
			{batch: named("f"), fired: "[3,6):d,e,f", kept: 0, wm: 6},
		}},
		{"sliding count fires partial first windows", Spec{Mode: Count, Length: 3, Slide: 1}, []step{
			{batch: named("a"), fired: "[-2,1):a", kept: 1, wm: 1},
			{batch: named("b", "c"), fired: "[-1,2):a,b [0,3):a,b,c", kept: 2, wm: 3},
			{batch: named("d"), fired: "[1,4):b,c,d", kept: 2, wm: 4},
		}},
		{"tumbling event time, no lateness", Spec{Mode: EventTime, Length: 10, Slide: 10}, []step{
			{batch: items(3, 1, 12), fired: "[0,10):p1,p3", kept: 1, wm: 12},
			{batch: items(5), late: 1, kept: 1, wm: 12},
			{batch: items(19, 14), fired: "", kept: 3, wm: 19},
			{batch: items(20), fired: "[10,20):p12,p14,p19", kept: 1, wm: 20},
		}},
		{"event time with allowed lateness", Spec{Mode: EventTime, Length: 10, Slide: 10, Lateness: 5}, []step{
			{batch: items(3, 12), fired: "", kept: 2, wm: 7},
			{batch: items(5), fired: "", kept: 3, wm: 7},
			{batch: items(16), fired: "[0,10):p3,p5", kept: 2, wm: 11},
			{batch: items(8), late: 1, kept: 2, wm: 11},
			{batch: items(1), late: 1, kept: 2, wm: 11}, // the watermark does not go back
		}},
		{"sliding event time", Spec{Mode: EventTime, Length: 10, Slide: 5}, []step{
			{batch: items(1, 7), fired: "[-5,5):p1", kept: 2, wm: 7},
			{batch: items(11), fired: "[0,10):p1,p7", kept: 2, wm: 11},
			// p3 is late for [0,10) and [-5,5), both fired.
			{batch: items(3), late: 1, kept: 2, wm: 11},
			// p9 still belongs to [5,15), which has not fired.
			{batch: items(9, 30), fired: "[5,15):p7,p9,p11 [10,20):p11", kept: 1, wm: 30},
		}},
		{"sliding event time, window with a gap does not fire empty", Spec{Mode: EventTime, Length: 4, Slide: 2}, []step{
			{batch: items(1), fired: "", kept: 1, wm: 1},
			{batch: items(20), fired: "[-2,2):p1 [0,4):p1", kept: 1, wm: 20},
		}},
		{"processing time", Spec{Mode: ProcessingTime, Length: 10, Slide: 10}, []step{
			{batch: named("a", "b"), now: 4, kept: 2, wm: 4},
			{batch: named("c"), now: 9, kept: 3, wm: 9},
			{batch: nil, now: 10, fired: "[0,10):a,b,c", kept: 0, wm: 10},
			{batch: named("d"), now: 25, kept: 1, wm: 25},
			// the clock steps back: the items take the watermark's time
			{batch: named("e"), now: 3, kept: 2, wm: 25},
			{batch: nil, now: 31, fired: "[20,30):d,e", kept: 0, wm: 31},
		}},
		{"negative event times", Spec{Mode: EventTime, Length: 10, Slide: 10}, []step{
			{batch: items(-15, -1), fired: "[-20,-10):p-15", kept: 1, wm: -1},
			{batch: items(0), fired: "[-10,0):p-1", kept: 1, wm: 0},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.spec.Validate(); err != nil {
				t.Fatal(err)
			}
			st := Initial()
			for i, s := range tc.steps {
				batch := slices.Clone(s.batch)
				next, fired, late := Advance(tc.spec, st, s.batch, s.now)
				if !slices.EqualFunc(batch, s.batch, func(a, b Item) bool { return a.Pos == b.Pos && string(a.Data) == string(b.Data) }) {
					t.Fatalf("step %d: Advance modified the batch", i)
				}
				if got := show(fired); got != s.fired {
					t.Errorf("step %d: fired %q, want %q", i, got, s.fired)
				}
				if len(late) != s.late {
					t.Errorf("step %d: %d late, want %d", i, len(late), s.late)
				}
				if len(next.Items) != s.kept {
					t.Errorf("step %d: kept %d items, want %d", i, len(next.Items), s.kept)
				}
				if next.Watermark != s.wm {
					t.Errorf("step %d: watermark %d, want %d", i, next.Watermark, s.wm)
				}
				if next.Late != st.Late+int64(s.late) {
					t.Errorf("step %d: late count %d, want %d", i, next.Late, st.Late+int64(s.late))
				}
				st = next
			}
		})
	}
}

// TestAdvanceIgnoresArrivalOrder: a batch's items in any order give the
// same state and windows.
func TestAdvanceIgnoresArrivalOrder(t *testing.T) {
	for _, spec := range []Spec{
		{Mode: Count, Length: 4, Slide: 2},
		{Mode: EventTime, Length: 4, Slide: 2},
		{Mode: ProcessingTime, Length: 4, Slide: 4},
	} {
		a := Item{Pos: 1, Data: []byte("a")}
		b := Item{Pos: 1, Data: []byte("b")}
		c := Item{Pos: 6, Data: []byte("c")}
		s1, f1, _ := Advance(spec, Initial(), []Item{a, b, c}, 9)
		s2, f2, _ := Advance(spec, Initial(), []Item{c, b, a}, 9)
		if show(f1) != show(f2) || fmt.Sprint(s1) != fmt.Sprint(s2) {
			t.Errorf("%v: %s %v vs %s %v", spec.Mode, show(f1), s1, show(f2), s2)
		}
	}
}

func TestValidate(t *testing.T) {
	bad := []Spec{
		{Mode: Count, Length: 0, Slide: 1},
		{Mode: Count, Length: 2, Slide: 3},
		{Mode: Count, Length: 2, Slide: 0},
		{Mode: Count, Length: 2, Slide: 2, Lateness: 1},
		{Mode: EventTime, Length: 2, Slide: 2, Lateness: -1},
		{Mode: 7, Length: 2, Slide: 2},
	}
	for _, s := range bad {
		if s.Validate() == nil {
			t.Errorf("%+v: no error", s)
		}
	}
	if err := (Spec{Mode: EventTime, Length: 2, Slide: 1, Lateness: 5}).Validate(); err != nil {
		t.Error(err)
	}
}

// TestFireMatchesEnumeration: fire, which looks windows up when few end
// in the range, finds exactly the windows that enumerating each item's
// windows finds.
func TestFireMatchesEnumeration(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		spec := Spec{Mode: EventTime, Length: 1 + rng.Int64N(20)}
		spec.Slide = 1 + rng.Int64N(spec.Length)
		var pos []int64
		for range rng.IntN(30) {
			pos = append(pos, rng.Int64N(200)-100)
		}
		slices.Sort(pos)
		its := items(pos...)
		from := rng.Int64N(240) - 120
		to := from + rng.Int64N(60)
		if got, want := show(spec.fire(its, from, to)), show(enumerate(spec, its, from, to)); got != want {
			t.Fatalf("%+v over %v in (%d, %d]: fire %q, enumeration %q", spec, pos, from, to, got, want)
		}
	}
}

func enumerate(s Spec, items []Item, from, to int64) []Window {
	var out []Window
	for st := s.firstStart(-1000); st < 1000; st += s.Slide {
		w := Window{Start: st, End: st + s.Length}
		if w.End <= from || w.End > to {
			continue
		}
		for _, it := range items {
			if it.Pos >= st && it.Pos < w.End {
				w.Items = append(w.Items, it)
			}
		}
		if len(w.Items) > 0 {
			out = append(out, w)
		}
	}
	return out
}
