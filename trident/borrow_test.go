package trident

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/trident/spout"
)

// TestHeldReportsSurviveRecycledBatches: stage bolts are Borrowers, so the
// executor reuses a batch once the bolt has executed it. A stage that
// does not commit holds the first count report of a batch as the anchor
// of what it emits when the batch finishes, often across executor batches
// (one tuple each here); it must hold a copy, or the report's tree is
// never acked and every batch replays after a message timeout.
func TestHeldReportsSurviveRecycledBatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		perGroup := &sink{}
		tt := NewTopology("held")
		words := tt.NewStream("s", BatchSource(Fields{"sentence"}, func() spout.Batcher { return newFixed(1, sentences...) }).Parallelism(2)).
			Each(Fields{"sentence"}, splitStrings, "word")
		AggregateGroups(words.GroupBy("word").Parallelism(2), Fields{"word"}, Combining[int64](count{}), "n").
			Each(Fields{"word", "n"}, perGroup.fn())
		cfg := Config{}
		cfg.Topology.BatchSize = 1
		r := submit(t, tt, cfg)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := r.WaitCommitted(ctx, 5); err != nil {
			t.Fatal(err)
		}
		if n, failed := r.Replayed(), r.FailedAttempts(); n != 0 || failed != 0 {
			t.Fatalf("%d batches replayed, %d attempts failed; want none", n, failed)
		}
		counts := map[string]int64{}
		for _, tu := range perGroup.all() {
			counts[tu[0].(string)] += tu[1].(int64)
		}
		for w, n := range wantCounts() {
			if counts[w] != 2*n { // two source tasks, each with every sentence
				t.Fatalf("%q counted %d times, want %d (all %v)", w, counts[w], 2*n, counts)
			}
		}
	})
}
