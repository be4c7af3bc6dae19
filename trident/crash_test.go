package trident

import (
	"context"
	"errors"
	"maps"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/trident/spout"
)

// TestWorkerCrashesResumeFromLastCommit: one panic in the processing phase
// and one in the commit phase, after state was written, each crash the
// worker; the restarted worker resumes from the last committed txid and the
// counts are exact.
func TestWorkerCrashesResumeFromLastCommit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFixed(1, sentences...)
		f := OpaqueMemory[int64]("counts")
		var splitPanicked, commitPanicked atomic.Bool
		tt := NewTopology("crashy")
		s := tt.NewStream("sentences", BatchSource(Fields{"sentence"}, func() spout.Batcher { return src }))
		g := s.Each(Fields{"sentence"}, FunctionFunc(func(ctx context.Context, tu Tuple, out Collector) error {
			if tu.String("sentence") == sentences[1] && splitPanicked.CompareAndSwap(false, true) {
				panic("poison sentence")
			}
			return split(ctx, tu, out)
		}), "word").GroupBy("word")
		st := PersistentAggregate(g, f, Fields{"word"}, count{}, "count")
		st.NewValuesStream().Each(Fields{"word", "count"}, FunctionFunc(func(_ context.Context, tu Tuple, _ Collector) error {
			if tu.String("word") == "four" && commitPanicked.CompareAndSwap(false, true) {
				panic("crash after the state write")
			}
			return nil
		}))
		cfg := Config{}
		cfg.Topology.RestartMinBackoff = 100 * time.Millisecond
		r := submit(t, tt, cfg)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		if err := r.WaitCommitted(ctx, 4); err != nil {
			t.Fatal(err)
		}
		if h := r.Health(); h.Crashes != 2 {
			t.Fatalf("crashes = %d (last %v), want 2", h.Crashes, h.LastCrash)
		}
		got := readCounts(t, f, 1, words()...)
		if !maps.Equal(got, wantCounts()) {
			t.Fatalf("counts = %v, want %v", got, wantCounts())
		}
	})
}

func TestAttemptLimitHaltsWithTheBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFixed(1, sentences...)
		tt := NewTopology("doomed")
		s := tt.NewStream("sentences", BatchSource(Fields{"sentence"}, func() spout.Batcher { return src }))
		g := s.Each(Fields{"sentence"}, FunctionFunc(func(context.Context, Tuple, Collector) error {
			return retryable(errFlaky)
		}), "word").GroupBy("word")
		PersistentAggregate(g, OpaqueMemory[int64]("c"), Fields{"word"}, count{}, "count")
		cfg := Config{}
		cfg.MaxAttempts = 3
		r := submit(t, tt, cfg)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		err := r.WaitCommitted(ctx, 1)
		if !errors.Is(err, ErrAttemptLimit) || !errors.Is(r.Err(), errFlaky) ||
			!strings.Contains(err.Error(), "batch 1 failed 3 times") {
			t.Fatalf("wait = %v, Err = %v; want the attempt limit naming batch 1 and the function's error", err, r.Err())
		}
		if r.Committed() != 0 {
			t.Fatalf("committed %v", r.Committed())
		}
	})
}

func TestReportedFailureNamesTheBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFixed(4, sentences...)
		var once atomic.Bool
		tt := NewTopology("reported")
		s := tt.NewStream("sentences", BatchSource(Fields{"sentence"}, func() spout.Batcher { return src }))
		g := s.Each(Fields{"sentence"}, FunctionFunc(func(ctx context.Context, tu Tuple, out Collector) error {
			if once.CompareAndSwap(false, true) {
				return reported(errFlaky)
			}
			return split(ctx, tu, out)
		}), "word").GroupBy("word")
		PersistentAggregate(g, OpaqueMemory[int64]("c"), Fields{"word"}, count{}, "count")
		r := submit(t, tt, Config{})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := r.WaitCommitted(ctx, 1); err != nil {
			t.Fatal(err)
		}
		errs := r.Errors()
		if len(errs) != 1 || !errors.Is(errs[0].Err, errFlaky) || !strings.Contains(errs[0].Err.Error(), "spout-sentences task") ||
			!strings.Contains(errs[0].Err.Error(), "batch 1:0") {
			t.Fatalf("errors = %v; want the reported failure with its component and batch", errs)
		}
	})
}
