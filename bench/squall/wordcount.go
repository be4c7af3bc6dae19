package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/squallstream/squall/ops"
	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/trident/spout/spouttest"
	"github.com/squallstream/squall/txn"
)

// sentences are cycled by the batch spout (the same as bench/storm's and
// the trident package's benchmark): 42 words in 5 sentences.
var sentences = []string{
	"the cow jumped over the moon",
	"an apple a day keeps the doctor away",
	"four score and seven years ago our fathers brought forth",
	"snow white and the seven dwarfs went to work",
	"i am at two with nature said the poet",
}

// split emits each space-separated word of the sentence.
func split(_ context.Context, t trident.Tuple, out trident.Collector) error {
	for w := range strings.SplitSeq(t.String("sentence"), " ") {
		trident.EmitString(out, w)
	}
	return nil
}

func runWordCount(ctx context.Context, o options) (string, error) {
	return wordCount(ctx, o, false)
}

// runWordCountPreAgg is trident-wordcount with the counting split in two
// by hand: each batch's words are counted per partition before the groupBy
// and the partial counts summed into state. Storm's planner does this
// itself for a combiner (Count) behind a groupBy; squall's does not yet, so
// this variant measures what that would be worth. It is not part of the
// comparison's ratios.
func runWordCountPreAgg(ctx context.Context, o options) (string, error) {
	return wordCount(ctx, o, true)
}

// partialCounts counts each word of a batch within one partition and emits
// (word, n) pairs when the batch ends.
type partialCounts struct{}

func (partialCounts) Init(txn.Attempt, trident.Collector) (map[string]int64, error) {
	return map[string]int64{}, nil
}

func (partialCounts) Aggregate(acc map[string]int64, t trident.Tuple, _ trident.Collector) (map[string]int64, error) {
	acc[t.String("word")]++
	return acc, nil
}

func (partialCounts) Complete(acc map[string]int64, out trident.Collector) error {
	for w, n := range acc {
		out.Emit(w, n)
	}
	return nil
}

// wordCount runs the word count with o.parallelism source tasks (each
// emitting o.sentences sentences per txid from a spout of its own, like
// each task of Storm's FixedBatchSpout; the split and the partial counts
// run in those tasks) and o.parallelism tasks for the grouped aggregation.
// A batch (one txid) holds the sentences of all source tasks.
func wordCount(ctx context.Context, o options, preAggregate bool) (string, error) {
	values := make([]any, o.sentences)
	wordsPerTask := 0
	for i := range values {
		s := sentences[i%len(sentences)]
		values[i] = s
		wordsPerTask += len(strings.Split(s, " "))
	}
	wordsPerBatch := wordsPerTask * o.parallelism
	tt := trident.NewTopology("bench")
	src := trident.BatchSource(trident.Fields{"sentence"}, func() spout.Batcher {
		return spouttest.NewFixed(o.sentences, true, values...) // called once per source task
	}).Parallelism(o.parallelism)
	s := tt.NewStream("sentences", src)
	words := s.Each(trident.Fields{"sentence"}, trident.FunctionFunc(split), "word")
	if preAggregate {
		partial := trident.PartitionAggregate(words, trident.Fields{"word"}, trident.Aggregator[map[string]int64](partialCounts{}), "word", "n")
		grouped := partial.GroupBy("word").Parallelism(o.parallelism)
		trident.PersistentAggregate(grouped, trident.OpaqueMemory[int64]("counts"), trident.Fields{"n"}, ops.Sum[int64]("n"), "count")
	} else {
		grouped := words.GroupBy("word").Parallelism(o.parallelism)
		trident.PersistentAggregate(grouped, trident.OpaqueMemory[int64]("counts"), trident.Fields{"word"}, ops.Count{}, "count")
	}
	cfg := trident.Config{} // one acker
	cfg.Topology.BatchSize = o.batch
	cfg.MaxBatchesInFlight = 2 // Storm: topology.max.spout.pending = 2
	cfg.BatchEmitInterval = time.Millisecond
	c := topology.NewLocalCluster()
	cfg.Cluster = c
	r, err := tt.Submit(ctx, cfg)
	if err != nil {
		return "", err
	}
	logComponents(r.Graph(), r.Config().Topology.Ackers)
	figures, err := measureBatches(ctx, o, r, wordsPerBatch)
	if err = shutdown(c, err); err != nil {
		return "", err
	}
	return figures, nil
}

// measureBatches waits for the first commit, warms up, and then counts the
// batches committed between the first commit after the warm-up and the
// first commit after the window.
func measureBatches(ctx context.Context, o options, r *trident.Running, wordsPerBatch int) (string, error) {
	wait, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := r.WaitCommitted(wait, 1); err != nil {
		return "", err
	}
	if err := sleep(ctx, o.warmup); err != nil {
		return "", err
	}
	next := func() (txn.TxID, time.Time, error) {
		txid := r.Committed() + 1
		err := r.WaitCommitted(wait, txid)
		return txid, time.Now(), err
	}
	tx0, t0, err := next()
	if err != nil {
		return "", err
	}
	if err := sleep(ctx, o.window); err != nil {
		return "", err
	}
	tx1, t1, err := next()
	if err != nil {
		return "", err
	}
	batches := int(tx1 - tx0)
	return fmt.Sprintf("words_per_s=%.0f batches=%d words_per_batch=%d window_s=%s",
		float64(batches*wordsPerBatch)/t1.Sub(t0).Seconds(), batches, wordsPerBatch, seconds(o.window)), nil
}
