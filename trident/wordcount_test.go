package trident

import (
	"context"
	"maps"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/trident/spout"
)

var sentences = []string{
	"the cow jumped over the moon",
	"the man went to the store and bought some candy",
	"four score and seven years ago",
	"how many apples can you eat",
}

func wantCounts() map[string]int64 {
	return map[string]int64{"the": 4, "cow": 1, "moon": 1, "man": 1, "four": 1, "apples": 1, "and": 2}
}

func words() []string { return []string{"the", "cow", "moon", "man", "four", "apples", "and"} }

// wordCount builds sentences -> split -> groupBy(word) -> count.
func wordCount(src *fixedBatchSpout, f StateFactory[int64], parallelism int) *Topology {
	tt := NewTopology("wordcount")
	s := tt.NewStream("sentences", BatchSource(Fields{"sentence"}, func() spout.Batcher { return src }))
	g := s.Each(Fields{"sentence"}, split, "word").GroupBy("word")
	g.Parallelism(parallelism)
	PersistentAggregate(g, f, Fields{"word"}, count{}, "count")
	return tt
}

// TestWordCount is Storm's MapState test: four sentences in batches of
// three, split, grouped by word and counted into opaque state.
func TestWordCount(t *testing.T) {
	for _, inFlight := range []int{1, 3} {
		synctest.Test(t, func(t *testing.T) {
			src := newFixed(3, sentences...)
			f := OpaqueMemory[int64]("counts")
			cfg := Config{}
			cfg.MaxBatchesInFlight = inFlight
			r := submit(t, wordCount(src, f, 2), cfg)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := r.WaitCommitted(ctx, 4); err != nil {
				t.Fatal(err)
			}
			got := readCounts(t, f, 2, words()...)
			if !maps.Equal(got, wantCounts()) {
				t.Fatalf("in flight %d: counts = %v, want %v", inFlight, got, wantCounts())
			}
		})
	}
}

func TestRetryableFailuresReplayWithoutDoubleCounting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFixed(1, sentences...)
		f := OpaqueMemory[int64]("counts")
		seen := map[string]int{}
		tt := NewTopology("flaky")
		s := tt.NewStream("sentences", BatchSource(Fields{"sentence"}, func() spout.Batcher { return src }))
		g := s.Each(Fields{"sentence"}, FunctionFunc(func(ctx context.Context, tu Tuple, out Collector) error {
			line := tu.String("sentence")
			seen[line]++
			if seen[line] == 1 {
				return failure.Retryable(errFlaky)
			}
			return split(ctx, tu, out)
		}), "word").GroupBy("word")
		PersistentAggregate(g, f, Fields{"word"}, count{}, "count")
		r := submit(t, tt, Config{})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		if err := r.WaitCommitted(ctx, 4); err != nil {
			t.Fatal(err)
		}
		got := readCounts(t, f, 1, words()...)
		if !maps.Equal(got, wantCounts()) {
			t.Fatalf("counts = %v, want %v", got, wantCounts())
		}
		for line, n := range seen {
			if n < 2 {
				t.Fatalf("sentence %q was seen %d times; the first attempt should have failed", line, n)
			}
		}
	})
}

// TestDeactivateStopsNewBatches: a deactivated topology commits what is in
// flight and starts nothing new (an idle active one keeps committing empty
// batches); Activate starts batches again, and Stop drains.
func TestDeactivateStopsNewBatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFixed(1, sentences...)
		f := OpaqueMemory[int64]("counts")
		cfg := Config{}
		cfg.MaxBatchesInFlight = 3
		r := submit(t, wordCount(src, f, 1), cfg)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := r.WaitCommitted(ctx, 1); err != nil {
			t.Fatal(err)
		}
		r.Deactivate()
		time.Sleep(time.Second)
		drained := r.Committed()
		time.Sleep(5 * time.Second)
		if got := r.Committed(); got != drained || r.Pending() != 0 {
			t.Fatalf("deactivated: committed went from %v to %v, %d trees pending", drained, got, r.Pending())
		}
		r.Activate()
		if err := r.WaitCommitted(ctx, drained+2); err != nil {
			t.Fatalf("after Activate: %v", err)
		}
		if err := r.Stop(ctx); err != nil {
			t.Fatalf("stop: %v", err)
		}
		if r.Pending() != 0 {
			t.Fatalf("stopped with %d trees pending", r.Pending())
		}
	})
}
