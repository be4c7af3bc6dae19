package trident

import (
	"context"
	"fmt"
	"maps"
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

// TestRecycledBatchesForgetTheirGroups: the batches of a pre-aggregation
// and of its committer are recycled (exec.Recycler), their group index
// emptied and its storage kept. Words come and go from batch to batch,
// enough of them to switch the cache of recent strings on, so a recycled
// batch that still found a group of an earlier batch would count a word
// into a group nobody emits or commits: every count must be exact. Both
// pools hold a recycled batch at the end.
func TestRecycledBatchesForgetTheirGroups(t *testing.T) {
	const batches, perBatch = 12, 2
	var lines []string
	want := map[string]int64{}
	for b := range batches {
		for l := range perBatch {
			var words []string
			for i := range 15 {
				w := fmt.Sprintf("w%d", (b*7+l*3+i*(b%3+1))%40)
				words = append(words, w)
				want[w]++
			}
			lines = append(lines, strings.Join(words, " "))
		}
	}
	synctest.Test(t, func(t *testing.T) {
		f := OpaqueMemory[int64]("recycled")
		tt := NewTopology("recycled")
		s := tt.NewStream("sentences", BatchSource(Fields{"sentence"}, func() spout.Batcher { return newFixed(perBatch, lines...) }))
		split := s.Each(Fields{"sentence"}, splitStrings, "word")
		st := PersistentAggregate(split.GroupBy("word").Parallelism(2), f, Fields{"word"}, borrowingCount{}, "count")
		r := submit(t, tt, Config{})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := r.WaitCommitted(ctx, batches); err != nil {
			t.Fatal(err)
		}
		if got := readKeys(t, f, 2, stringKeys(slices.Collect(maps.Keys(want)))); !maps.Equal(got, want) {
			t.Fatalf("counts = %v, want %v", got, want)
		}
		committer := st.n.op.(*exec.Persist).P.(*persistCombiner[int64])
		pre := st.n.parent.parent.op.(*exec.Aggregate).Agg.(*preAggregator[int64])
		for name, kept := range map[string]int{"committer": committer.free.kept(), "pre-aggregation": pre.free.kept()} {
			if kept == 0 {
				t.Errorf("no %s batch was recycled", name)
			}
		}
	})
}

// TestLateTupleMissesTheRecycledBatch: a tuple that reaches a batch after
// the batch finished is not added to the pre-aggregation it recycled,
// which the next batch takes: the next batch's partial counts are its
// own tuples' alone.
func TestLateTupleMissesTheRecycledBatch(t *testing.T) {
	tt := NewTopology("late")
	s := tt.NewStream("s", BatchSource(Fields{"sentence"}, func() spout.Batcher { return newFixed(1, sentences...) }))
	words := s.Each(Fields{"sentence"}, splitStrings, "word")
	PersistentAggregate(words.GroupBy("word"), OpaqueMemory[int64]("c"), Fields{"word"}, borrowingCount{}, "count")
	st, _, _ := processorOf(t, tt, s.n)
	partials := map[string]int64{}
	batch := func(txid txn.TxID) *runtime.Batch {
		a := txn.Attempt{TxID: txid}
		return runtime.NewBatchTo(a, st.Begin(a), func(_ string, v []any) { partials[v[0].(string)] += v[1].(int64) })
	}
	line := []any{"the cow jumped over the moon"}
	first := batch(1)
	if err := st.Source(first, line); err != nil {
		t.Fatal(err)
	}
	if err := st.Finish(first); err != nil {
		t.Fatal(err)
	}
	if err := st.Source(first, line); err != nil { // late
		t.Fatal(err)
	}
	clear(partials)
	second := batch(2)
	if err := st.Source(second, line); err != nil {
		t.Fatal(err)
	}
	if err := st.Finish(second); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"the": 2, "cow": 1, "jumped": 1, "over": 1, "moon": 1}
	if !maps.Equal(partials, want) {
		t.Fatalf("the second batch's partials %v, want %v", partials, want)
	}
}

// TestLateTupleMissesTheRecycledCommit: the same for a committer's batch,
// recycled after its commit: a partial count arriving after the commit
// reaches neither the state nor the next batch's commit.
func TestLateTupleMissesTheRecycledCommit(t *testing.T) {
	f := OpaqueMemory[int64]("late")
	tt := NewTopology("late")
	s := tt.NewStream("s", BatchSource(Fields{"sentence"}, func() spout.Batcher { return newFixed(1, sentences...) }))
	words := s.Each(Fields{"sentence"}, splitStrings, "word")
	counts := PersistentAggregate(words.GroupBy("word"), f, Fields{"word"}, borrowingCount{}, "count")
	st, p, pn := processorOf(t, tt, counts.n)
	var in plan.Input
	for _, stage := range p.Stages {
		if slices.Contains(stage.Nodes, pn) {
			in = stage.Inputs[0]
		}
	}
	partial := []any{"the", int64(2)}
	run := func(txid txn.TxID, late bool) {
		a := txn.Attempt{TxID: txid}
		bt := runtime.NewBatchTo(a, st.Begin(a), func(string, []any) {})
		if err := st.Execute(bt, in, partial); err != nil {
			t.Fatal(err)
		}
		if err := st.Finish(bt); err != nil {
			t.Fatal(err)
		}
		if late {
			if err := st.Execute(bt, in, partial); err != nil {
				t.Fatal(err)
			}
		}
	}
	run(1, true)
	run(2, false)
	if got := readKeys(t, f, 1, stringKeys([]string{"the"})); got["the"] != 4 {
		t.Fatalf("the count is %d after two batches of a partial 2", got["the"])
	}
}

// TestRecycledKeepsAtMostMaxRecycled: a node keeps no more emptied
// batches than maxRecycled, and hands back each one it kept once.
func TestRecycledKeepsAtMostMaxRecycled(t *testing.T) {
	var r recycled[int]
	if r.get() != nil {
		t.Fatal("an empty list handed a batch")
	}
	batches := make([]*int, maxRecycled+3)
	for i := range batches {
		batches[i] = new(int)
		r.put(batches[i])
	}
	if r.kept() != maxRecycled {
		t.Fatalf("%d kept, want %d", r.kept(), maxRecycled)
	}
	seen := map[*int]bool{}
	for b := r.get(); b != nil; b = r.get() {
		if seen[b] || !slices.Contains(batches[:maxRecycled], b) {
			t.Fatalf("got %p again or one that was not kept", b)
		}
		seen[b] = true
	}
	if len(seen) != maxRecycled {
		t.Fatalf("%d handed back, want %d", len(seen), maxRecycled)
	}
}

// kept returns the number of batches r keeps.
func (r *recycled[T]) kept() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.free)
}
