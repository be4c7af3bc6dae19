package trident

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/trident/internal/plan"
	"github.com/squallstream/squall/trident/spout"
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
