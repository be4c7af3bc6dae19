package trident

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// benchSentences are cycled by the benchmark spout: 42 words (36
// distinct) in 5 sentences.
var benchSentences = []string{
	"the cow jumped over the moon",
	"an apple a day keeps the doctor away",
	"four score and seven years ago our fathers brought forth",
	"snow white and the seven dwarfs went to work",
	"i am at two with nature said the poet",
}

// benchBatch is the number of sentences per batch.
const benchBatch = 10_000

// cyclingSpout emits batches of benchBatch sentences until it has emitted
// total sentences, then empty batches; a replayed txid gets the same
// batch.
type cyclingSpout struct {
	mu      sync.Mutex
	total   int
	emitted int
	batches map[txn.TxID][2]int // txid -> [first, end) sentence numbers
}

func (s *cyclingSpout) EmitBatch(_ context.Context, a txn.Attempt, c spout.Collector) error {
	s.mu.Lock()
	r, ok := s.batches[a.TxID]
	if !ok {
		end := min(s.emitted+benchBatch, s.total)
		r = [2]int{s.emitted, end}
		s.emitted = end
		s.batches[a.TxID] = r
	}
	s.mu.Unlock()
	for i := r[0]; i < r[1]; i++ {
		c.Emit(benchSentences[i%len(benchSentences)])
	}
	return nil
}

func (s *cyclingSpout) Ack(_ context.Context, txid txn.TxID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.batches, txid)
	return nil
}

// runWordCount counts the words of at least words words' worth of
// sentences and returns the elapsed time, the number of words and the
// batch latency.
func runWordCount(b *testing.B, f StateFactory[int64], words int) (time.Duration, int, topology.Latency) {
	perCycle := 0
	for _, s := range benchSentences {
		perCycle += len(strings.Fields(s))
	}
	sentences := max(words*len(benchSentences)/perCycle, benchBatch)
	batches := (sentences + benchBatch - 1) / benchBatch
	src := &cyclingSpout{total: sentences, batches: map[txn.TxID][2]int{}}
	tt := NewTopology("bench")
	s := tt.NewStream("sentences", BatchSource(Fields{"sentence"}, func() spout.Batcher { return src }))
	g := s.Each(Fields{"sentence"}, split, "word").GroupBy("word")
	PersistentAggregate(g, f, Fields{"word"}, count{}, "count")
	cfg := Config{}
	cfg.MaxBatchesInFlight = 2
	cfg.BatchEmitInterval = time.Millisecond
	c := topology.NewLocalCluster()
	start := time.Now()
	cfg.Cluster = c
	r, err := tt.Submit(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := r.WaitCommitted(context.Background(), txn.TxID(batches)); err != nil {
		b.Fatal(err)
	}
	elapsed := time.Since(start)
	lat := r.BatchLatency()
	if err := c.Shutdown(context.Background()); err != nil {
		b.Fatal(err)
	}
	counted := 0
	for i := range sentences {
		counted += len(strings.Fields(benchSentences[i%len(benchSentences)]))
	}
	return elapsed, counted, lat
}

// BenchmarkTridentWordCount: sentences -> split -> groupBy(word) ->
// persistentAggregate(count) on opaque memory state, batches of 10,000
// sentences. One op is one word.
func BenchmarkTridentWordCount(b *testing.B) {
	elapsed, words, lat := runWordCount(b, OpaqueMemory[int64]("bench"), b.N)
	b.ReportMetric(float64(words)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(lat.P99.Microseconds())/1e3, "batch-p99-ms")
}

// BenchmarkTridentOpaqueOverhead runs the same word count on
// non-transactional and on opaque memory state, alternately, five times,
// and reports the median of how much longer the opaque run of each pair
// took.
func BenchmarkTridentOpaqueOverhead(b *testing.B) {
	var ratios []float64
	for range 5 {
		plain, _, _ := runWordCount(b, NonTransactionalMemory[int64]("plain"), b.N)
		opaque, _, _ := runWordCount(b, OpaqueMemory[int64]("opaque"), b.N)
		ratios = append(ratios, opaque.Seconds()/plain.Seconds())
	}
	slices.Sort(ratios)
	b.ReportMetric(100*(ratios[len(ratios)/2]-1), "overhead-%")
}
