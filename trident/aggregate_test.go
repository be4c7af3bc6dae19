package trident

import (
	"context"
	"maps"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/trident/spout"
)

// sink collects the tuples that reach it.
type sink struct {
	mu     sync.Mutex
	tuples [][]any
}

func (s *sink) fn() Function {
	return FunctionFunc(func(_ context.Context, t Tuple, _ Collector) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.tuples = append(s.tuples, append([]any(nil), t.Values()...))
		return nil
	})
}

func (s *sink) all() [][]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]any(nil), s.tuples...)
}

var splitWords = FlatMapFunctionFunc(func(_ context.Context, t Tuple, out Collector) error {
	for _, w := range strings.Fields(t.String("sentence")) {
		out.Emit(w)
	}
	return nil
})

// joinWords is a ReducerAggregator that joins words with spaces.
type joinWords struct{}

func (joinWords) Init() string { return "" }
func (joinWords) Reduce(acc string, t Tuple) (string, error) {
	if acc == "" {
		return t.String("word"), nil
	}
	return acc + " " + t.String("word"), nil
}

func TestMapPeekAndAggregations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFixed(1, sentences...)
		perGroup, totals, joined := &sink{}, &sink{}, &sink{}
		var peeked int
		tt := NewTopology("aggs")
		words := tt.NewStream("s", BatchSource(Fields{"sentence"}, func() spout.Batcher { return src })).
			FlatMap(splitWords, "word").
			Map(MapFunctionFunc(func(_ context.Context, t Tuple) ([]any, error) {
				return []any{strings.ToLower(t.String("word"))}, nil
			}), "word").
			Peek(func(Tuple) { peeked++ })
		AggregateGroups(words.GroupBy("word").Parallelism(2), Fields{"word"}, Combining[int64](count{}), "n").
			Each(Fields{"word", "n"}, perGroup.fn())
		Aggregate(words, Fields{"word"}, Combining[int64](count{}), "total").
			Each(Fields{"total"}, totals.fn())
		PartitionAggregate(words.BatchGlobal(), Fields{"word"}, Reducing[string](joinWords{}), "line").
			Each(Fields{"line"}, joined.fn())
		r := submit(t, tt, Config{})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := r.WaitCommitted(ctx, 5); err != nil {
			t.Fatal(err)
		}
		counts := map[string]int64{}
		for _, tu := range perGroup.all() {
			counts[tu[0].(string)] += tu[1].(int64)
		}
		for w, n := range wantCounts() {
			if counts[w] != n {
				t.Fatalf("grouped aggregation: %q = %d, want %d (all %v)", w, counts[w], n, counts)
			}
		}
		var total int64
		for _, tu := range totals.all() {
			total += tu[0].(int64)
		}
		want := 0
		for _, s := range sentences {
			want += len(strings.Fields(s))
		}
		if total != int64(want) || peeked != want {
			t.Fatalf("global aggregation summed %d, peek saw %d; want %d", total, peeked, want)
		}
		lines := map[string]bool{}
		for _, tu := range joined.all() {
			lines[tu[0].(string)] = true
		}
		for _, s := range sentences {
			if !lines[s] {
				t.Fatalf("batch-global reduce lost sentence %q: %v", s, maps.Collect(maps.All(lines)))
			}
		}
	})
}
