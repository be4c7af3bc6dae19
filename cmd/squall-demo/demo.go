package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/topology"
)

type options struct {
	Sentences  int
	FailRate   float64
	CrashAfter int
	Seed       uint64
	Timeout    time.Duration
	Logger     *slog.Logger
}

func (o options) validate() error {
	switch {
	case o.Sentences <= 0:
		return fmt.Errorf("-sentences must be positive, got %d", o.Sentences)
	case o.FailRate < 0 || o.FailRate > 0.9:
		return fmt.Errorf("-fail-rate must be between 0 and 0.9, got %v", o.FailRate)
	case o.CrashAfter < 0:
		return fmt.Errorf("-crash-after must not be negative, got %d", o.CrashAfter)
	case o.Timeout <= 0:
		return fmt.Errorf("-timeout must be positive, got %v", o.Timeout)
	}
	return nil
}

type report struct {
	Acked, Failed, Crashes      uint64
	WordsCounted, WordsExpected uint64
	Elapsed                     time.Duration
	P50, P99                    time.Duration
}

var sentences = []string{
	"the cow jumped over the moon",
	"an apple a day keeps the doctor away",
	"four score and seven years ago",
	"snow white and the seven dwarfs",
	"i am at two with nature",
}

// source is the demo's durable, replayable message source: it survives
// worker restarts, like a Kafka topic would.
type source struct {
	mu       sync.Mutex
	next     int   // next new sentence
	replay   []int // failed or lost sentences to send again
	inflight map[int]bool
	acked    int
	total    int
	done     chan struct{}
}

func (s *source) take() (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var id int
	switch {
	case len(s.replay) > 0:
		id, s.replay = s.replay[0], s.replay[1:]
	case s.next < s.total:
		id = s.next
		s.next++
	default:
		return 0, false
	}
	s.inflight[id] = true
	return id, true
}

func (s *source) finish(id int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.inflight[id] {
		return
	}
	delete(s.inflight, id)
	if !ok {
		s.replay = append(s.replay, id)
		return
	}
	if s.acked++; s.acked == s.total {
		close(s.done)
	}
}

// reopen requeues what a crashed worker had in flight.
func (s *source) reopen() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id := range s.inflight {
		s.replay = append(s.replay, id)
	}
	clear(s.inflight)
}

type sentenceSpout struct {
	src *source
	out *topology.SpoutCollector
}

func (s *sentenceSpout) Open(_ context.Context, _ topology.TaskInfo, out *topology.SpoutCollector) error {
	s.out = out
	s.src.reopen()
	return nil
}

func (s *sentenceSpout) NextTuple() {
	if id, ok := s.src.take(); ok {
		s.out.Emit(id, topology.Values{sentences[id%len(sentences)]})
	}
}

func (s *sentenceSpout) Ack(id any)   { s.src.finish(id.(int), true) }
func (s *sentenceSpout) Fail(id any)  { s.src.finish(id.(int), false) }
func (s *sentenceSpout) Close() error { return nil }

var errInjected = errors.New("injected retryable failure")

// newSplit returns a basic bolt that splits sentences into words and fails
// a fraction of its inputs retryably.
func newSplit(rate float64, seed uint64) func() topology.BasicBolt {
	return func() topology.BasicBolt {
		rng := rand.New(rand.NewPCG(seed, seed))
		return topology.BasicBoltFunc(func(t *topology.Tuple, out *topology.BasicCollector) error {
			if rng.Float64() < rate {
				return failure.Retryable(errInjected)
			}
			for _, w := range strings.Fields(t.String("sentence")) {
				out.Emit(topology.Values{w})
			}
			return nil
		})
	}
}

// newCount returns a basic bolt that counts words, and panics once after
// crashAfter words when that is positive.
func newCount(counted *atomic.Uint64, crashAfter int, crashed *atomic.Bool) func() topology.BasicBolt {
	return func() topology.BasicBolt {
		counts := map[string]int{}
		return topology.BasicBoltFunc(func(t *topology.Tuple, _ *topology.BasicCollector) error {
			n := counted.Add(1)
			if crashAfter > 0 && n >= uint64(crashAfter) && crashed.CompareAndSwap(false, true) {
				panic("demo: injected crash")
			}
			counts[t.String("word")]++
			return nil
		})
	}
}

func run(ctx context.Context, o options, w io.Writer) error {
	if err := o.validate(); err != nil {
		return err
	}
	src := &source{inflight: map[int]bool{}, total: o.Sentences, done: make(chan struct{})}
	var counted atomic.Uint64
	var crashed atomic.Bool
	b := topology.NewBuilder()
	b.Spout("sentences", func() topology.Spout { return &sentenceSpout{src: src} }).Output("sentence")
	b.BasicBolt("split", newSplit(o.FailRate, o.Seed)).Output("word").Input("sentences", topology.Shuffle())
	b.BasicBolt("count", newCount(&counted, o.CrashAfter, &crashed)).Parallelism(2).Input("split", topology.ByFields("word"))
	topo, err := b.Build()
	if err != nil {
		return err
	}
	cfg := topology.DefaultConfig()
	cfg.MaxSpoutPending = 1000
	cfg.RestartMinBackoff = 50 * time.Millisecond
	cfg.Logger = o.Logger
	cluster := topology.NewLocalCluster()
	start := time.Now()
	running, err := cluster.Submit("demo", topo, cfg)
	if err != nil {
		return err
	}
	timeout := time.NewTimer(o.Timeout)
	defer timeout.Stop()
	var waitErr error
	select {
	case <-src.done:
	case <-timeout.C:
		waitErr = fmt.Errorf("not every sentence was acked within %v", o.Timeout)
	case <-ctx.Done():
		waitErr = ctx.Err()
	}
	elapsed := time.Since(start)
	stopCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := cluster.Shutdown(stopCtx); err != nil {
		return err
	}
	if waitErr != nil {
		return waitErr
	}
	spout := running.Stats().Components["sentences"]
	expected := uint64(0)
	for i := range o.Sentences {
		expected += uint64(len(strings.Fields(sentences[i%len(sentences)])))
	}
	printReport(w, o, report{
		Acked: spout.Acked, Failed: spout.Failed, Crashes: uint64(running.Health().Crashes),
		WordsCounted: counted.Load(), WordsExpected: expected, Elapsed: elapsed,
		P50: spout.CompleteLatency.P50, P99: spout.CompleteLatency.P99,
	})
	return nil
}
