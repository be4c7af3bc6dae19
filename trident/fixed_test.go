package trident

import (
	"context"
	"maps"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/failure"
)

// sentenceBatches is sentences as FixedSource batches of one sentence.
func sentenceBatches() [][][]any {
	var bs [][][]any
	for _, s := range sentences {
		bs = append(bs, [][]any{{s}})
	}
	return bs
}

// TestFixedSourceReplaysIdentically: every batch's first attempt fails
// after its tuples were emitted; the replays re-emit the same sentences
// and the counts are exact.
func TestFixedSourceReplaysIdentically(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		seen := map[string]int{}
		tt := NewTopology("fixed")
		s := tt.NewStream("sentences", FixedSource(Fields{"sentence"}, sentenceBatches()...))
		g := s.Each(Fields{"sentence"}, FunctionFunc(func(ctx context.Context, tu Tuple, out Collector) error {
			line := tu.String("sentence")
			if seen[line]++; seen[line] == 1 {
				return failure.Retryable(errFlaky)
			}
			return split(ctx, tu, out)
		}), "word").GroupBy("word")
		f := OpaqueMemory[int64]("counts")
		PersistentAggregate(g, f, Fields{"word"}, count{}, "count")
		r := submit(t, tt, Config{})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		if err := r.WaitCommitted(ctx, 6); err != nil { // two empty batches after the four
			t.Fatal(err)
		}
		if got := readCounts(t, f, 1, words()...); !maps.Equal(got, wantCounts()) {
			t.Fatalf("counts = %v, want %v", got, wantCounts())
		}
		for _, line := range sentences {
			if seen[line] != 2 {
				t.Fatalf("sentence %q seen %d times; want a failed attempt and its replay", line, seen[line])
			}
		}
		// Every sentence's batch was announced twice: once failing, once
		// replayed; every committed batch has a commit phase.
		committed := r.BatchLatency().Count
		if r.Replayed() < uint64(len(sentences)) || r.Announced() < committed+r.Replayed() {
			t.Fatalf("announced %d, replayed %d, committed %d: want at least %d replays",
				r.Announced(), r.Replayed(), committed, len(sentences))
		}
		if c := r.CommitLatency(); c.Count != committed || c.Max > r.BatchLatency().Max {
			t.Fatalf("commit latency %+v for %d committed batches (batch latency %+v)", c, committed, r.BatchLatency())
		}
	})
}
