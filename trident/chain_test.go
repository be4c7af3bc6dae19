package trident

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/trident/spout"
)

func TestChainedAggregations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFixed(4, sentences...)
		perBatch, perWord := &sink{}, &sink{}
		tt := NewTopology("chain")
		w := tt.NewStream("s", BatchSource(Fields{"sentence"}, func() spout.Batcher { return src })).FlatMap(splitWords, "word")
		c := ChainedAgg(w)
		ChainAggregate(c, Fields{"word"}, Combining[int64](count{}), "words")
		ChainAggregate(c, Fields{"word"}, Reducing[int64](letters{}), "letters")
		c.End().Each(Fields{"words", "letters"}, perBatch.fn())
		g := ChainedGroups(w.GroupBy("word").Parallelism(2))
		ChainAggregate(g, Fields{"word"}, Combining[int64](count{}), "n")
		ChainAggregate(g, Fields{"word"}, Reducing[int64](letters{}), "letters")
		g.End().Each(Fields{"word", "n", "letters"}, perWord.fn())
		r := submit(t, tt, Config{})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := r.WaitCommitted(ctx, 1); err != nil {
			t.Fatal(err)
		}
		var words, letterSum int64
		for _, s := range sentences {
			for _, w := range splitAll(s) {
				words++
				letterSum += int64(len(w))
			}
		}
		got := perBatch.all()
		if len(got) < 1 || got[0][0] != words || got[0][1] != letterSum {
			t.Fatalf("batch 1 chained result = %v, want [%d %d]", got, words, letterSum)
		}
		found := false
		for _, tu := range perWord.all() {
			if tu[0] == "the" {
				found = true
				if tu[1] != int64(4) || tu[2] != int64(12) {
					t.Fatalf("the: %v, want 4 occurrences and 12 letters", tu)
				}
			}
		}
		if !found {
			t.Fatal("no chained result for \"the\"")
		}
	})
}
