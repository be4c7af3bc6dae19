package trident

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/trident/internal/exec"
	"github.com/squallstream/squall/trident/spout"
)

// TestEmittedStringGroupsOnlyItsOwnField: a word EmitString emits is
// handed as a string to the pre-aggregation only when the word is the
// aggregation's one group field; grouped by a field of the input tuple,
// or by the word and another field, the groups are the tuple's, and
// every count is right. The first sentence is a word of the others, so
// that a word handed where it is not the whole group would find that
// sentence's group.
func TestEmittedStringGroupsOnlyItsOwnField(t *testing.T) {
	lines := append([]string{"the"}, sentences...)
	perWord := map[string]int64{}
	perSentence := map[string]int64{}
	perPair := map[string]int64{}
	for _, s := range lines {
		for _, w := range strings.Fields(s) {
			if w == "moon" {
				continue // rejected by the combiner, below
			}
			perWord[w]++
			perSentence[s]++
			perPair[w+"/"+s]++
		}
	}
	cases := []struct {
		name   string
		group  Fields
		passes bool
		keys   []state.Key
		want   map[string]int64
	}{
		{"the word", Fields{"word"}, true, stringKeys(slices.Collect(maps.Keys(perWord))), perWord},
		{"the input's sentence", Fields{"sentence"}, false, stringKeys(lines), perSentence},
		{"the word and the sentence", Fields{"word", "sentence"}, false, pairKeys(lines), perPair},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := OpaqueMemory[int64]("counts")
				tt := NewTopology("emitted")
				s := tt.NewStream("sentences", BatchSource(Fields{"sentence"}, func() spout.Batcher { return newFixed(3, lines...) }))
				split := s.Each(Fields{"sentence"}, splitStrings, "word")
				PersistentAggregate(split.GroupBy(c.group...).Parallelism(2), f, Fields{"word"}, borrowingCount{reject: "moon"}, "count")
				_, p, pn := processorOf(t, tt, split.n)
				if got := exec.PassesEmitted(p, pn); got != c.passes {
					t.Fatalf("the emitted string is passed: %v, want %v", got, c.passes)
				}
				dlq := &MemoryDeadLetters{}
				r := submit(t, tt, Config{DeadLetters: dlq})
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				if err := r.WaitCommitted(ctx, 4); err != nil {
					t.Fatal(err)
				}
				if got := readKeys(t, f, 2, c.keys); !maps.Equal(got, c.want) {
					t.Fatalf("counts = %v, want %v", got, c.want)
				}
				if len(dlq.Letters()) == 0 {
					t.Fatal("no dead letter for the rejected word")
				}
			})
		})
	}
}

// stringKeys returns the one-value keys of values.
func stringKeys(values []string) []state.Key {
	keys := make([]state.Key, len(values))
	for i, v := range values {
		keys[i] = state.MustKey(v)
	}
	return keys
}

// pairKeys returns the keys (word, sentence) of every word.
func pairKeys(lines []string) []state.Key {
	var keys []state.Key
	for _, s := range lines {
		for _, w := range strings.Fields(s) {
			keys = append(keys, state.MustKey(w, s))
		}
	}
	return keys
}

// readKeys reads keys from partition state, by their values joined with
// "/".
func readKeys(t *testing.T, f StateFactory[int64], partitions int, keys []state.Key) map[string]int64 {
	t.Helper()
	got := map[string]int64{}
	for p := range partitions {
		ms, err := f(context.Background(), p, partitions)
		if err != nil {
			t.Fatal(err)
		}
		vals, err := ms.MultiGet(context.Background(), keys)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			if v.Found {
				got[keyLabel(keys[i])] = v.Val // a pair repeats in keys: set, not add
			}
		}
	}
	return got
}

// keyLabel returns a key's values joined with "/".
func keyLabel(k state.Key) string {
	var parts []string
	for _, v := range k.Values() {
		parts = append(parts, v.(string))
	}
	return strings.Join(parts, "/")
}

// TestEmitBesideEmitStringGroupsByTuple: an Each feeding an aggregation
// grouped by its emitted word, which would be passed the string from
// EmitString, groups what Emit emits by the tuple: the words, the empty
// one included, and EmitString's beside them, are counted apart.
func TestEmitBesideEmitStringGroupsByTuple(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lines := []string{"a  b", "b c  a"} // empty words between double spaces
		split := FunctionFunc(func(_ context.Context, t Tuple, out Collector) error {
			for i, w := range strings.Split(t.String("sentence"), " ") {
				if i%2 == 0 {
					out.Emit(w)
				} else {
					EmitString(out, w)
				}
			}
			return nil
		})
		f := OpaqueMemory[int64]("counts")
		tt := NewTopology("emit")
		s := tt.NewStream("sentences", BatchSource(Fields{"sentence"}, func() spout.Batcher { return newFixed(1, lines...) }))
		words := s.Each(Fields{"sentence"}, split, "word")
		PersistentAggregate(words.GroupBy("word").Parallelism(2), f, Fields{"word"}, borrowingCount{reject: "-"}, "count")
		_, p, pn := processorOf(t, tt, words.n)
		if !exec.PassesEmitted(p, pn) {
			t.Fatal("the emitted string is not passed: this test would test nothing")
		}
		r := submit(t, tt, Config{})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := r.WaitCommitted(ctx, 3); err != nil {
			t.Fatal(err)
		}
		want := map[string]int64{"": 2, "a": 2, "b": 2, "c": 1}
		if got := readKeys(t, f, 2, stringKeys([]string{"", "a", "b", "c"})); !maps.Equal(got, want) {
			t.Fatalf("counts = %v, want %v", got, want)
		}
	})
}

// flakyCount is borrowingCount whose Init fails once, retryably, for the
// word flaky.
type flakyCount struct {
	borrowingCount
	flaky  string
	failed *atomic.Bool
}

func (c flakyCount) Init(t Tuple) (int64, error) {
	if t.String("word") == c.flaky && c.failed.CompareAndSwap(false, true) {
		return 0, failure.Retryable(errFlaky)
	}
	return 1, nil
}

// TestEmittedStringRetryableFailureReplaysTheBatch: a retryable error of
// the aggregation a word EmitString emits goes straight to fails the
// batch, which is replayed; no word is lost or counted twice.
func TestEmittedStringRetryableFailureReplaysTheBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var failed atomic.Bool
		f := OpaqueMemory[int64]("counts")
		tt := NewTopology("flaky")
		s := tt.NewStream("sentences", BatchSource(Fields{"sentence"}, func() spout.Batcher { return newFixed(2, sentences...) }))
		PersistentAggregate(s.Each(Fields{"sentence"}, splitStrings, "word").GroupBy("word"), f, Fields{"word"}, flakyCount{flaky: "moon", failed: &failed}, "count")
		r := submit(t, tt, Config{})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := r.WaitCommitted(ctx, 3); err != nil {
			t.Fatal(err)
		}
		if !failed.Load() {
			t.Fatal("the aggregation never failed")
		}
		if got := readCounts(t, f, 1, words()...); !maps.Equal(got, wantCounts()) {
			t.Fatalf("counts = %v, want %v", got, wantCounts())
		}
	})
}
