package topology

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/squallstream/squall/internal/backoff"
	"github.com/squallstream/squall/internal/clock"
	"github.com/squallstream/squall/internal/notify"
)

// Running is a submitted topology. Its supervisor runs one worker at a time
// and restarts it, with exponential backoff, whenever it crashes.
type Running struct {
	name    string
	plan    *plan
	metrics *metrics
	errors  errorLog
	active  activation

	net     *network               // cluster mode only (RunWorker)
	current atomic.Pointer[worker] // the running worker, for deliveries from peers
	started notify.Signal          // broadcast when current is set

	mu       sync.Mutex
	worker   *worker
	crashes  int
	last     *Crash
	stopOnce sync.Once
	stop     chan struct{}
	done     chan struct{}
	drained  notify.Signal // a spout executor's pending trees dropped to 0
}

// Health describes a running topology's supervisor.
type Health struct {
	Running   bool   // a worker is running (false once stopped)
	Crashes   int    // worker crashes so far
	LastCrash *Crash // the most recent crash, or nil
}

func start(name string, t *Topology, cfg Config) *Running {
	r := newRunning(name, newPlan(t, cfg), cfg)
	go r.supervise()
	return r
}

func newRunning(name string, p *plan, cfg Config) *Running {
	r := &Running{name: name, plan: p, metrics: newMetrics(p),
		stop: make(chan struct{}), done: make(chan struct{})}
	r.active.on.Store(!cfg.StartInactive)
	return r
}

// supervise runs workers until Stop, restarting crashed ones with backoff.
func (r *Running) supervise() {
	defer close(r.done)
	if r.net != nil {
		defer r.net.close()
	}
	cfg := r.plan.cfg
	restarts := backoff.Sequence{Backoff: backoff.Exponential(int64(cfg.RestartMinBackoff), int64(cfg.RestartMaxBackoff))}
	for incarnation := 0; ; incarnation++ {
		w := newWorker(r.plan, r.metrics, &r.errors, &r.active, incarnation, &r.drained, r.net)
		r.mu.Lock()
		r.worker = w
		r.mu.Unlock()
		r.current.Store(w)
		r.started.Broadcast()
		started := cfg.Clock.Now()
		crash := w.run(r.stop)
		r.current.Store(nil)
		r.mu.Lock()
		r.worker = nil
		if crash != nil {
			r.crashes++
			r.last = crash
		}
		r.mu.Unlock()
		if crash == nil {
			return
		}
		if clock.Since(cfg.Clock, started) > cfg.RestartMaxBackoff {
			restarts.Reset()
		}
		wait := time.Duration(restarts.Next())
		cfg.Logger.Warn("restarting worker", "topology", r.name, "after", wait, "crashes", r.crashes)
		t := cfg.Clock.NewTimer(wait)
		select {
		case <-t.C():
		case <-r.stop:
			t.Stop()
			return
		}
	}
}

// Name returns the name the topology was submitted under.
func (r *Running) Name() string { return r.name }

// Activate lets spouts emit again after Deactivate.
func (r *Running) Activate() { r.active.set(true) }

// Deactivate stops calling NextTuple; acks and fails are still delivered.
func (r *Running) Deactivate() { r.active.set(false) }

// Active reports whether the spouts are asked to emit: false after
// Deactivate (and Stop) or a submission with Config.StartInactive, until
// Activate.
func (r *Running) Active() bool { return r.active.on.Load() }

// Config returns the configuration the topology runs with, its zero fields
// replaced by their defaults.
func (r *Running) Config() Config { return r.plan.cfg }

// Stats returns a snapshot of the counters.
func (r *Running) Stats() Stats { return r.metrics.snapshot() }

// Errors returns the most recently reported errors, oldest first.
func (r *Running) Errors() []ReportedError { return r.errors.recent() }

// Health returns the supervisor's view of the topology.
func (r *Running) Health() Health {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Health{Running: r.worker != nil, Crashes: r.crashes, LastCrash: r.last}
}

// Pending returns the number of trees the spouts are waiting on.
func (r *Running) Pending() int64 {
	r.mu.Lock()
	w := r.worker
	r.mu.Unlock()
	if w == nil {
		return 0
	}
	return w.pendingTrees()
}

// drainedSince reports whether every spout executor of the running worker
// has confirmed the off-th Deactivate (activation) and no tree is pending.
func (r *Running) drainedSince(off uint64) bool {
	r.mu.Lock()
	w := r.worker
	r.mu.Unlock()
	return w == nil || w.quietSince(off) && w.pendingTrees() == 0
}

// Stop deactivates the spouts, waits until no tree is pending or ctx is
// done, then stops the worker and waits for every executor to return. Trees
// still pending when it stops are never acked, so their sources replay them
// after a restart. Stop returns an error naming how many trees were still
// pending if ctx ended the wait.
func (r *Running) Stop(ctx context.Context) error {
	r.Deactivate()
	var err error
	if !r.drain(ctx) {
		err = fmt.Errorf("topology: %s stopped with %d trees pending: %w", r.name, r.Pending(), ctx.Err())
	}
	r.kill()
	return err
}

// drain waits until every spout executor has seen the latest Deactivate and
// no tree is pending; it reports false if ctx ended the wait first.
func (r *Running) drain(ctx context.Context) bool {
	off := r.active.offs.Load()
	for {
		changed := r.drained.Wait() // before the check, so no change is missed
		if r.drainedSince(off) {
			return true
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		case <-r.done:
			return true
		}
	}
}

// kill stops the worker at once and waits for the supervisor to return.
func (r *Running) kill() {
	r.stopOnce.Do(func() { close(r.stop) })
	<-r.done
}

// Done is closed once the topology has stopped.
func (r *Running) Done() <-chan struct{} { return r.done }
