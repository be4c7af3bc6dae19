package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/squallstream/squall/internal/clock"
	"github.com/squallstream/squall/topology"
)

// publishEvery is how many events a component counts before it publishes
// them, by adding publishEvery to the shared counter (so the counters sum
// over the tasks of a component); the Storm side does the same.
const publishEvery = 256

// probe holds what the components publish and the driver reads.
type probe struct {
	sunk      atomic.Int64 // tuples reached the sink, all tasks
	acked     atomic.Int64 // trees acked at the spout, all tasks
	failed    atomic.Int64 // trees failed (must stay 0)
	opened    atomic.Bool  // the spout has been opened
	start     atomic.Bool  // acker-memory: the spout may emit
	recording atomic.Bool  // core-acked: record complete latencies
	latency   histogram
}

type spoutMode int

const (
	untracked spoutMode = iota // no message id
	timed                      // message id: emit time, for the complete latency
	limited                    // message id: a sequence number; emits limit tuples once started
)

// constValues is the one value every spout tuple carries, as storm-perf's
// ConstSpout.
var constValues = topology.Values{"some data"}

// constSpout emits constValues in field "value".
type constSpout struct {
	p     *probe
	mode  spoutMode
	limit int64
	out   *topology.SpoutCollector
	base  time.Time
	sent  int64
	acked int64
}

func (s *constSpout) Open(_ context.Context, _ topology.TaskInfo, out *topology.SpoutCollector) error {
	s.out = out
	s.base = time.Now()
	s.p.opened.Store(true)
	return nil
}

func (s *constSpout) NextTuple() {
	switch s.mode {
	case untracked:
		s.out.Emit(nil, constValues)
	case timed:
		s.out.Emit(int64(time.Since(s.base)), constValues)
	default:
		if s.sent == s.limit || !s.p.start.Load() {
			return
		}
		s.sent++
		s.out.Emit(s.sent, constValues)
	}
}

func (s *constSpout) Ack(id any) {
	if s.mode == timed && s.p.recording.Load() {
		s.p.latency.record((int64(time.Since(s.base)) - id.(int64)) / 1e3)
	}
	s.acked++
	if s.acked%publishEvery == 0 {
		s.p.acked.Add(publishEvery)
	}
}

func (s *constSpout) Fail(any)     { s.p.failed.Add(1) }
func (s *constSpout) Close() error { return nil }

// idBolt re-emits its input anchored to it, then acks it (storm-perf's
// IdBolt).
type idBolt struct{ out *topology.OutputCollector }

func (b *idBolt) Prepare(_ context.Context, _ topology.TaskInfo, out *topology.OutputCollector) error {
	b.out = out
	return nil
}

func (b *idBolt) Execute(t *topology.Tuple) {
	b.out.Emit(t.Values(), t)
	b.out.Ack(t)
}

func (b *idBolt) Cleanup() error { return nil }

// BorrowsTuples: idBolt keeps no tuple after Execute (topology.Borrower).
func (b *idBolt) BorrowsTuples() {}

// sinkBolt counts its input and acks it (storm-perf's DevNullBolt), or,
// with ack false, drops it unacked so that its tree stays pending.
type sinkBolt struct {
	p   *probe
	ack bool
	out *topology.OutputCollector
	n   int64
}

func (b *sinkBolt) Prepare(_ context.Context, _ topology.TaskInfo, out *topology.OutputCollector) error {
	b.out = out
	return nil
}

func (b *sinkBolt) Execute(t *topology.Tuple) {
	if b.ack {
		b.out.Ack(t)
	}
	b.n++
	if b.n%publishEvery == 0 {
		b.p.sunk.Add(publishEvery)
	}
}

func (b *sinkBolt) Cleanup() error { return nil }

// BorrowsTuples: sinkBolt keeps no tuple after Execute, acked or not
// (topology.Borrower).
func (b *sinkBolt) BorrowsTuples() {}

// submitCore builds constant spout -> id bolt -> sink (local-or-shuffle
// groupings, parallelism executors of one task each per component) and
// submits it to a new local cluster.
func submitCore(p *probe, mode spoutMode, limit int64, ack bool, parallelism int, cfg topology.Config) (*topology.LocalCluster, error) {
	b := topology.NewBuilder()
	b.Spout("spout", func() topology.Spout { return &constSpout{p: p, mode: mode, limit: limit} }).Output("value").
		Parallelism(parallelism)
	b.Bolt("id", func() topology.Bolt { return &idBolt{} }).Output("value").Input("spout", topology.LocalOrShuffle()).
		Parallelism(parallelism)
	b.Bolt("null", func() topology.Bolt { return &sinkBolt{p: p, ack: ack} }).Input("id", topology.LocalOrShuffle()).
		Parallelism(parallelism)
	topo, err := b.Build()
	if err != nil {
		return nil, err
	}
	logComponents(topo.Graph(), cfg.Ackers)
	c := topology.NewLocalCluster()
	if _, err := c.Submit("bench", topo, cfg); err != nil {
		return nil, err
	}
	return c, nil
}

// logComponents logs the executors and tasks of g's components and the
// ackers on stderr, for checking a run's parallelism against the Storm
// side's log.
func logComponents(g topology.Graph, ackers int) {
	parts := make([]string, 0, len(g.Components)+1)
	for _, c := range g.Components {
		parts = append(parts, fmt.Sprintf("%s=%d/%d", c.ID, c.Parallelism, c.Tasks))
	}
	parts = append(parts, fmt.Sprintf("ackers=%d", ackers))
	fmt.Fprintln(os.Stderr, "components (executors/tasks):", strings.Join(parts, " "))
}

func shutdown(c *topology.LocalCluster, err error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return errors.Join(err, c.Shutdown(ctx))
}

func runCoreNoAck(ctx context.Context, o options) (string, error) {
	p := &probe{}
	cfg := topology.DefaultConfig()
	cfg.Ackers = 0
	cfg.BatchSize = o.batch
	c, err := submitCore(p, untracked, 0, true, o.parallelism, cfg)
	if err != nil {
		return "", err
	}
	rate, err := measureRate(ctx, o, p, &p.sunk)
	if err = shutdown(c, err); err != nil {
		return "", err
	}
	return fmt.Sprintf("tuples_per_s=%.0f window_s=%s", rate, seconds(o.window)), nil
}

func runCoreAcked(ctx context.Context, o options) (string, error) {
	p := &probe{}
	cfg := topology.DefaultConfig() // one acker, 30 s message timeout
	cfg.MaxSpoutPending = o.pending
	cfg.BatchSize = o.batch
	c, err := submitCore(p, timed, 0, true, o.parallelism, cfg)
	if err != nil {
		return "", err
	}
	rate, err := measureRate(ctx, o, p, &p.acked)
	if err = shutdown(c, err); err != nil {
		return "", err
	}
	return fmt.Sprintf("tuples_per_s=%.0f p50_us=%d p99_us=%d failed=%d window_s=%s",
		rate, p.latency.quantile(0.50), p.latency.quantile(0.99), p.failed.Load(), seconds(o.window)), nil
}

// measureRate waits for the first events, warms up, then counts the events
// of counter over the window (recording latencies meanwhile).
func measureRate(ctx context.Context, o options, p *probe, counter *atomic.Int64) (float64, error) {
	if err := waitFor(ctx, 60*time.Second, "the first tuples", func() bool { return counter.Load() > 0 }); err != nil {
		return 0, err
	}
	if err := sleep(ctx, o.warmup); err != nil {
		return 0, err
	}
	c0, t0 := counter.Load(), time.Now()
	p.recording.Store(true)
	err := sleep(ctx, o.window)
	p.recording.Store(false)
	c1, elapsed := counter.Load(), time.Since(t0)
	return float64(c1-c0) / elapsed.Seconds(), err
}

func waitFor(ctx context.Context, limit time.Duration, what string, ok func() bool) error {
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %v waiting for %s", limit, what)
		}
		if err := sleep(ctx, time.Millisecond); err != nil {
			return err
		}
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) error { return clock.Sleep(ctx, clock.Real(), d) }
