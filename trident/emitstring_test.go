package trident

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/trident/spout"
)

// splitStrings is split through EmitString.
var splitStrings = FunctionFunc(func(_ context.Context, t Tuple, out Collector) error {
	for _, w := range strings.Fields(t.String("sentence")) {
		EmitString(out, w)
	}
	return nil
})

// TestEmitStringCountsLikeEmit: the word count with EmitString, through a
// repartition and with the pre-aggregation in the split's stage, counts
// what the one with Emit does, without a replay, and the words a Peek
// keeps after their batch still read right (nothing in the arena is
// reused).
func TestEmitStringCountsLikeEmit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := OpaqueMemory[int64]("counts")
		var mu sync.Mutex
		var kept []Tuple
		tt := NewTopology("emitstring")
		// Two source tasks, each emitting every sentence: a count report
		// of one often waits, held, for the other's data.
		s := tt.NewStream("sentences", BatchSource(Fields{"sentence"}, func() spout.Batcher { return newFixed(3, sentences...) }).Parallelism(2))
		splitWords := s.Each(Fields{"sentence"}, splitStrings, "word").Peek(func(t Tuple) {
			mu.Lock()
			kept = append(kept, t)
			mu.Unlock()
		})
		PersistentAggregate(splitWords.GroupBy("word").Parallelism(2), f, Fields{"word"}, count{}, "count")
		r := submit(t, tt, Config{})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := r.WaitCommitted(ctx, 4); err != nil {
			t.Fatal(err)
		}
		if n, failed := r.Replayed(), r.FailedAttempts(); n != 0 || failed != 0 {
			t.Fatalf("%d batches replayed, %d attempts failed; want none", n, failed)
		}
		want2 := wantCounts()
		for w := range want2 {
			want2[w] *= 2
		}
		if got := readCounts(t, f, 2, words()...); !maps.Equal(got, want2) {
			t.Fatalf("counts = %v, want %v", got, want2)
		}
		var want, got []string
		for _, line := range sentences {
			for _, w := range strings.Fields(line) {
				want = append(want, line+"/"+w, line+"/"+w)
			}
		}
		for _, k := range kept {
			got = append(got, k.String("sentence")+"/"+k.String("word"))
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("kept tuples read\n%v\nwant\n%v", got, want)
		}
	})
}

// recorder is a Collector of no runtime: EmitString falls back to Emit.
type recorder struct{ got [][]any }

func (r *recorder) Emit(values ...any)  { r.got = append(r.got, values) }
func (r *recorder) ReportError(_ error) {}

func TestEmitStringFallsBackToEmit(t *testing.T) {
	var r recorder
	EmitString(&r, "word")
	if len(r.got) != 1 || len(r.got[0]) != 1 || r.got[0][0] != "word" {
		t.Fatalf("recorded %v; want one Emit(\"word\")", r.got)
	}
}
