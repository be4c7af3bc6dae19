package trident

import (
	"context"
	"maps"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/trident/spout"
)

// TestMergeTwoSourcesAndTwoBranches merges two sources, and two branches of
// one of them, and counts the words of all three.
func TestMergeTwoSourcesAndTwoBranches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := newFixed(1, sentences[:2]...), newFixed(1, sentences[2:]...)
		f := OpaqueMemory[int64]("counts")
		tt := NewTopology("merge")
		sa := tt.NewStream("a", BatchSource(Fields{"sentence"}, func() spout.Batcher { return a }))
		sb := tt.NewStream("b", BatchSource(Fields{"sentence"}, func() spout.Batcher { return b }))
		wa := sa.FlatMap(splitWords, "word")
		the := wa.Filter(FilterFunc(func(_ context.Context, t Tuple) (bool, error) { return t.String("word") == "the", nil }))
		rest := wa.Filter(FilterFunc(func(_ context.Context, t Tuple) (bool, error) { return t.String("word") != "the", nil }))
		all := tt.Merge(tt.Merge(the, rest), sb.FlatMap(splitWords, "word"))
		PersistentAggregate(all.GroupBy("word"), f, Fields{"word"}, count{}, "count")
		r := submit(t, tt, Config{})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := r.WaitCommitted(ctx, 3); err != nil {
			t.Fatal(err)
		}
		if got := readCounts(t, f, 1, words()...); !maps.Equal(got, wantCounts()) {
			t.Fatalf("counts = %v, want %v", got, wantCounts())
		}
	})
}

func TestMergeChecksFields(t *testing.T) {
	tt := NewTopology("m")
	s := tt.NewStream("a", BatchSource(Fields{"x"}, func() spout.Batcher { return newFixed(1) }))
	other := NewTopology("o").NewStream("b", BatchSource(Fields{"x"}, func() spout.Batcher { return newFixed(1) }))
	tt.Merge(s, s.Map(MapFunctionFunc(func(context.Context, Tuple) ([]any, error) { return []any{1}, nil }), "y"))
	tt.Merge(s, other)
	_, err := tt.Submit(context.Background(), Config{})
	for _, want := range []string{"Merge: stream 1 has fields [y], stream 0 has [x]", "Merge: stream 1 belongs to another topology"} {
		if err == nil || !containsText(err.Error(), want) {
			t.Errorf("error %v does not mention %q", err, want)
		}
	}
}
