package trident

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/trident/internal/plan"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/trident/windowstore"
)

// TestLocalOrShuffle: Storm's localOrShuffle repartition plans as its own
// route and loses nothing: the word count through it has Storm's counts.
func TestLocalOrShuffle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFixed(3, sentences...)
		f := OpaqueMemory[int64]("counts")
		tt := NewTopology("local-or-shuffle")
		s := tt.NewStream("sentences", BatchSource(Fields{"sentence"}, func() spout.Batcher { return src }))
		g := s.LocalOrShuffle().Each(Fields{"sentence"}, split, "word").Parallelism(3).GroupBy("word")
		PersistentAggregate(g, f, Fields{"word"}, count{}, "count")
		if printed := plan.Print(tt.plan()); !strings.Contains(printed, "localOrShuffle") {
			t.Fatalf("the plan has no localOrShuffle route:\n%s", printed)
		}
		r := submit(t, tt, Config{})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := r.WaitCommitted(ctx, 4); err != nil {
			t.Fatal(err)
		}
		if got := readCounts(t, f, 1, words()...); !maps.Equal(got, wantCounts()) {
			t.Fatalf("counts = %v, want %v", got, wantCounts())
		}
	})
}

// TestTupleSelect: Storm's select(Fields) returns the values in the
// order asked, whatever the tuple's order; a missing field panics.
func TestTupleSelect(t *testing.T) {
	tu := NewTuple(Fields{"a", "b", "c"}, 1, "two", 3.0)
	if got := tu.Select("c", "a"); !slices.Equal(got, []any{3.0, 1}) {
		t.Fatalf("Select(c, a) = %v", got)
	}
	if got := tu.Select(); len(got) != 0 {
		t.Fatalf("Select() = %v", got)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Select of a missing field did not panic")
		}
	}()
	tu.Select("a", "missing")
}

// TestNameSuffixesComponentIDs: Storm's name(...) shows in the bolt's
// component id and the plan, the same on every declaration of the
// topology; a bad name is refused at Submit; an unnamed topology keeps
// its ids.
func TestNameSuffixesComponentIDs(t *testing.T) {
	declare := func(name string) *Topology {
		tt := NewTopology("named")
		s := tt.NewStream("sentences", BatchSource(Fields{"sentence"}, func() spout.Batcher { return newFixed(1, sentences...) }))
		g := s.Each(Fields{"sentence"}, split, "word").GroupBy("word")
		if name != "" {
			g.Name(name)
		}
		PersistentAggregate(g, OpaqueMemory[int64]("counts"), Fields{"word"}, count{}, "count")
		return tt
	}
	stages := func(tt *Topology) []string {
		var names []string
		for _, s := range tt.plan().Stages {
			names = append(names, s.Name)
		}
		return names
	}
	named, again, plain := stages(declare("counting")), stages(declare("counting")), stages(declare(""))
	if !slices.Equal(named, again) || !slices.Contains(named, "b-1-counting") {
		t.Fatalf("named stages %v, again %v: want b-1-counting, twice the same", named, again)
	}
	if !slices.Equal(plain, []string{"spout-sentences", "b-1"}) {
		t.Fatalf("unnamed stages %v", plain)
	}
	_, err := declare("no spaces").Submit(context.Background(), Config{})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `Name("no spaces")`) {
		t.Fatalf("Submit with a bad name = %v", err)
	}
}

// TestWindowSpecIntrospection: a window spec tells tooling its kind,
// length and slide.
func TestWindowSpecIntrospection(t *testing.T) {
	cases := []struct {
		spec               WindowSpec
		tumbling, counted  bool
		n, nSlide          int
		d, dSlide          time.Duration
		field, description string
	}{
		{TumblingCount(100), true, true, 100, 100, 0, 0, "", "tumbling count 100"},
		{SlidingCount(10, 2), false, true, 10, 2, 0, 0, "", "sliding count 10 every 2"},
		{TumblingDuration(time.Hour), true, false, 0, 0, time.Hour, time.Hour, "", "tumbling duration 1h0m0s"},
		{SlidingDuration(15*time.Minute, time.Minute).EventTime("at"), false, false, 0, 0, 15 * time.Minute, time.Minute, "at",
			"sliding duration 15m0s every 1m0s on event time of at"},
	}
	for _, c := range cases {
		n, nSlide := c.spec.Count()
		d, dSlide := c.spec.Duration()
		if c.spec.Tumbling() != c.tumbling || c.spec.Counted() != c.counted || n != c.n || nSlide != c.nSlide ||
			d != c.d || dSlide != c.dSlide || c.spec.TimeField() != c.field || c.spec.String() != c.description {
			t.Errorf("%s: tumbling %v counted %v count %d/%d duration %v/%v field %q", c.spec, c.spec.Tumbling(), c.spec.Counted(), n, nSlide, d, dSlide, c.spec.TimeField())
		}
	}
	if got := SlidingDuration(time.Minute, time.Second).EventTime("at").AllowedLateness(5 * time.Second).Lateness(); got != 5*time.Second {
		t.Errorf("Lateness() = %v", got)
	}
}

// TestRemoveWindow: Storm's removeAll for one window task deletes that
// partition's records and leaves the other partitions'.
func TestRemoveWindow(t *testing.T) {
	ctx := t.Context()
	store := windowstore.NewMemory()
	for p := range 2 {
		if err := store.Put(ctx, windowID("counts", p), 1, []byte("record"), 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := RemoveWindow(ctx, store, "counts", 0); err != nil {
		t.Fatal(err)
	}
	if n0, n1 := store.Len(windowID("counts", 0)), store.Len(windowID("counts", 1)); n0 != 0 || n1 != 1 {
		t.Fatalf("records after removing partition 0: %d and %d, want 0 and 1", n0, n1)
	}
}
