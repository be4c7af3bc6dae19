package topology

import (
	"context"
	"testing"
	"time"
)

// constSpout emits the same values limit times, with a message id when
// tracked is set, like storm-perf's ConstSpout.
type constSpout struct {
	out     *SpoutCollector
	limit   int
	sent    int
	tracked bool
	acked   int
	done    chan struct{}
}

var constValues = Values{"some data"}

// benchMaxSpoutPending bounds the trees in flight in the acked benchmark,
// which sets its complete latency (Little's law: pending / throughput).
const benchMaxSpoutPending = 1024

func (s *constSpout) Open(_ context.Context, _ TaskInfo, out *SpoutCollector) error {
	s.out = out
	return nil
}

func (s *constSpout) NextTuple() {
	if s.sent == s.limit {
		return
	}
	s.sent++
	if s.tracked {
		s.out.Emit(s.sent, constValues)
		return
	}
	s.out.Emit(nil, constValues)
}

func (s *constSpout) Ack(any) {
	s.acked++
	if s.acked == s.limit {
		close(s.done)
	}
}
func (s *constSpout) Fail(any)     { panic("benchmark tuple failed") }
func (s *constSpout) Close() error { return nil }

// nullBolt acks and counts; with a done channel it closes it at limit.
type nullBolt struct {
	out   *OutputCollector
	n     int
	limit int
	done  chan struct{}
}

func (b *nullBolt) Prepare(_ context.Context, _ TaskInfo, out *OutputCollector) error {
	b.out = out
	return nil
}
func (b *nullBolt) Execute(t *Tuple) {
	b.out.Ack(t)
	b.n++
	if b.n == b.limit && b.done != nil {
		close(b.done)
	}
}
func (b *nullBolt) Cleanup() error { return nil }

// runConstTopology runs const spout -> id bolt -> null bolt for n tuples,
// parallelism 1 everywhere, and returns the elapsed time and the stats.
func runConstTopology(b *testing.B, n int, tracked bool) (time.Duration, Stats) {
	done := make(chan struct{})
	spout := &constSpout{limit: n, tracked: tracked, done: done}
	sink := &nullBolt{limit: n}
	if !tracked {
		sink.done = done
	}
	tb := NewBuilder()
	tb.Spout("spout", func() Spout { return spout }).Output("value")
	tb.Bolt("id", boltFunc(identity).newBolt).Output("value").Input("spout", LocalOrShuffle())
	tb.Bolt("null", func() Bolt { return sink }).Input("id", LocalOrShuffle())
	topo, err := tb.Build()
	if err != nil {
		b.Fatal(err)
	}
	cfg := DefaultConfig()
	if tracked {
		cfg.MaxSpoutPending = benchMaxSpoutPending
	} else {
		cfg.Ackers = 0
	}
	c := NewLocalCluster()
	start := time.Now()
	r, err := c.Submit("bench", topo, cfg)
	if err != nil {
		b.Fatal(err)
	}
	<-done
	elapsed := time.Since(start)
	if err := c.Shutdown(context.Background()); err != nil {
		b.Fatal(err)
	}
	return elapsed, r.Stats()
}

// BenchmarkTopologyNoAck: spout -> id bolt -> null bolt with tracking off.
// One op is one spout tuple through both hops.
func BenchmarkTopologyNoAck(b *testing.B) {
	b.ReportAllocs()
	elapsed, _ := runConstTopology(b, b.N, false)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "tuples/s")
}

// BenchmarkTopologyAcked: the same with message ids and one acker; one op
// is one tree (spout tuple, id-bolt tuple) fully acked.
func BenchmarkTopologyAcked(b *testing.B) {
	b.ReportAllocs()
	elapsed, stats := runConstTopology(b, b.N, true)
	lat := stats.Components["spout"].CompleteLatency
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "trees/s")
	b.ReportMetric(float64(lat.P50.Nanoseconds())/1e3, "p50-us")
	b.ReportMetric(float64(lat.P99.Nanoseconds())/1e3, "p99-us")
}
