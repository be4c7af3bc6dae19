package trident

import (
	"context"
	"maps"
	goruntime "runtime"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/trident/internal/exec"
	"github.com/squallstream/squall/trident/internal/plan"
	"github.com/squallstream/squall/trident/internal/runtime"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// borrowingCount is count, borrowing its tuples, and rejecting the word
// reject to the dead letters.
type borrowingCount struct{ reject string }

func (b borrowingCount) Init(t Tuple) (int64, error) {
	if w := t.String("word"); w == b.reject {
		return 0, Reject(errorString("no " + w))
	}
	return 1, nil
}
func (borrowingCount) Combine(a, b int64) int64 { return a + b }
func (borrowingCount) Zero() int64              { return 0 }
func (borrowingCount) BorrowsTuples() bool      { return true }

// processorOf returns the opened processor of the first task of the
// stage that runs node n, and the plan node of n.
func processorOf(t *testing.T, tt *Topology, n *node) (*exec.Processor, *plan.Plan, *plan.Node) {
	t.Helper()
	if len(tt.errs) > 0 {
		t.Fatal(tt.errs)
	}
	p := tt.plan()
	for _, stage := range p.Stages {
		for _, pn := range stage.Nodes {
			if pn.ID == n.id {
				pr := exec.NewProcessor(p, stage, len(tt.nodes), &exec.Config{}, nil, nil)
				if err := pr.Open(context.Background(), &runtime.Task{Stage: stage, NumTasks: stage.Parallelism}); err != nil {
					t.Fatal(err)
				}
				return pr, p, pn
			}
		}
	}
	t.Fatalf("node %v in no stage", n)
	return nil, nil, nil
}

// reusedFor reports whether the processor running s's node builds the
// node's output tuples in reused storage.
func reusedFor(t *testing.T, tt *Topology, s *Stream) bool {
	t.Helper()
	_, p, pn := processorOf(t, tt, s.n)
	return exec.ReusesOutput(p, pn)
}

// TestReusedOnlyWhenEveryConsumerBorrows: an Each's output is built in
// reused storage only when every operation reading it in its stage
// borrows, and never when it leaves the stage.
func TestReusedOnlyWhenEveryConsumerBorrows(t *testing.T) {
	source := func(tt *Topology) *Stream {
		return tt.NewStream("s", BatchSource(Fields{"sentence"}, func() spout.Batcher { return newFixed(1, sentences...) }))
	}
	cases := []struct {
		name  string
		build func(tt *Topology, words *Stream)
		want  bool
	}{
		{"borrowing persistent aggregate", func(tt *Topology, words *Stream) {
			PersistentAggregate(words.GroupBy("word"), OpaqueMemory[int64]("c"), Fields{"word"}, borrowingCount{}, "count")
		}, true},
		{"borrowing partition aggregate", func(tt *Topology, words *Stream) {
			PartitionAggregate(words, Fields{"word"}, Combining[int64](borrowingCount{}), "n")
		}, true},
		{"a combiner that does not say it borrows", func(tt *Topology, words *Stream) {
			PersistentAggregate(words.GroupBy("word"), OpaqueMemory[int64]("c"), Fields{"word"}, count{}, "count")
		}, false},
		{"a peek besides the aggregate", func(tt *Topology, words *Stream) {
			PersistentAggregate(words.GroupBy("word"), OpaqueMemory[int64]("c"), Fields{"word"}, borrowingCount{}, "count")
			words.Peek(func(Tuple) {})
		}, false},
		{"sent to another stage", func(tt *Topology, words *Stream) {
			PartitionAggregate(words.Shuffle(), Fields{"word"}, Combining[int64](borrowingCount{}), "n")
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tt := NewTopology("reuse")
			words := source(tt).Each(Fields{"sentence"}, splitStrings, "word")
			c.build(tt, words)
			if got := reusedFor(t, tt, words); got != c.want {
				t.Fatalf("reused = %v, want %v", got, c.want)
			}
		})
	}
}

// TestBorrowedTuplesCountAndRejectRight: the word count through reused
// tuples (EmitString into a borrowing combiner, partial counts in the
// split's stage) counts every word, and what outlives a tuple holds its
// own values: the groups' words sent to the committers, and the dead
// letters of the rejected word.
func TestBorrowedTuplesCountAndRejectRight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := OpaqueMemory[int64]("counts")
		tt := NewTopology("borrowed")
		s := tt.NewStream("sentences", BatchSource(Fields{"sentence"}, func() spout.Batcher { return newFixed(3, sentences...) }))
		split := s.Each(Fields{"sentence"}, splitStrings, "word")
		PersistentAggregate(split.GroupBy("word").Parallelism(2), f, Fields{"word"}, borrowingCount{reject: "moon"}, "count")
		if !reusedFor(t, tt, split) {
			t.Fatal("the words are not built in reused storage: this test would test nothing")
		}
		dlq := &MemoryDeadLetters{}
		r := submit(t, tt, Config{DeadLetters: dlq})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := r.WaitCommitted(ctx, 4); err != nil {
			t.Fatal(err)
		}
		want := wantCounts()
		delete(want, "moon")
		if got := readCounts(t, f, 2, words()...); !maps.Equal(got, want) {
			t.Fatalf("counts = %v, want %v", got, want)
		}
		var wantLetters, gotLetters []string
		for _, line := range sentences {
			for range strings.Count(" "+line+" ", " moon ") {
				wantLetters = append(wantLetters, line+"/moon")
			}
		}
		for _, l := range dlq.Letters() {
			if l.Attempt.TxID > 3 {
				continue // the spout's batches 1 to 3 hold every sentence once
			}
			gotLetters = append(gotLetters, l.Values[0].(string)+"/"+l.Values[1].(string))
			if !strings.Contains(l.Err.Error(), "no moon") {
				t.Errorf("letter error %v", l.Err)
			}
		}
		slices.Sort(wantLetters)
		slices.Sort(gotLetters)
		if len(wantLetters) == 0 || !slices.Equal(gotLetters, wantLetters) {
			t.Fatalf("dead letters %q, want %q", gotLetters, wantLetters)
		}
	})
}

// TestBorrowedPathAllocatesNothing: once a batch has seen its words, a
// sentence split with EmitString into a borrowing pre-aggregation costs
// no allocation at all; into a combiner that does not borrow, the arena's
// chunks (a values chunk per 1,024 values, a string chunk per 512 words).
func TestBorrowedPathAllocatesNothing(t *testing.T) {
	split := FunctionFunc(func(_ context.Context, t Tuple, out Collector) error {
		for w := range strings.SplitSeq(t.String("sentence"), " ") {
			EmitString(out, w)
		}
		return nil
	})
	const runs = 10_000
	mallocs := func(agg CombinerAggregator[int64]) uint64 {
		tt := NewTopology("allocs")
		s := tt.NewStream("s", BatchSource(Fields{"sentence"}, func() spout.Batcher { return newFixed(1, sentences...) }))
		words := s.Each(Fields{"sentence"}, split, "word")
		PersistentAggregate(words.GroupBy("word"), OpaqueMemory[int64]("c"), Fields{"word"}, agg, "count")
		st, _, _ := processorOf(t, tt, s.n)
		bt := &runtime.Batch{Attempt: txn.Attempt{TxID: 1}, Data: st.Begin(txn.Attempt{TxID: 1})}
		line := []any{sentences[1]} // 11 words
		source := func() {
			if err := st.Source(bt, line); err != nil {
				t.Fatal(err)
			}
		}
		source() // the batch's groups
		defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(1))
		var before, after goruntime.MemStats
		goruntime.ReadMemStats(&before)
		for range runs {
			source()
		}
		goruntime.ReadMemStats(&after)
		return after.Mallocs - before.Mallocs
	}
	if n := mallocs(borrowingCount{}); n > runs/1000 {
		t.Errorf("borrowed: %d allocations for %d sentences, want none", n, runs)
	}
	// 110,000 words: their values and strings in the arena's chunks,
	// about 400.
	if n := mallocs(count{}); n < runs/100 {
		t.Errorf("not borrowed: %d allocations for %d sentences, want the arena's chunks", n, runs)
	}
}
