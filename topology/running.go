package topology

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Running is a submitted topology. Its supervisor runs one worker at a time
// and restarts it, with exponential backoff, whenever it crashes.
type Running struct {
	name    string
	plan    *plan
	metrics *metrics
	errors  errorLog
	active  atomic.Bool

	mu       sync.Mutex
	worker   *worker
	crashes  int
	last     *Crash
	stopOnce sync.Once
	stop     chan struct{}
	done     chan struct{}
}

// Health describes a running topology's supervisor.
type Health struct {
	Running   bool   // a worker is running (false once stopped)
	Crashes   int    // worker crashes so far
	LastCrash *Crash // the most recent crash, or nil
}

func start(name string, t *Topology, cfg Config) *Running {
	p := newPlan(t, cfg)
	r := &Running{name: name, plan: p, metrics: newMetrics(p),
		stop: make(chan struct{}), done: make(chan struct{})}
	r.active.Store(!cfg.StartInactive)
	go r.supervise()
	return r
}

// supervise runs workers until Stop, restarting crashed ones with backoff.
func (r *Running) supervise() {
	defer close(r.done)
	cfg := r.plan.cfg
	backoff := cfg.RestartMinBackoff
	for {
		w := newWorker(r.plan, r.metrics, &r.errors, &r.active)
		r.mu.Lock()
		r.worker = w
		r.mu.Unlock()
		started := time.Now()
		crash := w.run(r.stop)
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
		if time.Since(started) > cfg.RestartMaxBackoff {
			backoff = cfg.RestartMinBackoff
		}
		cfg.Logger.Warn("restarting worker", "topology", r.name, "after", backoff, "crashes", r.crashes)
		select {
		case <-time.After(backoff):
		case <-r.stop:
			return
		}
		backoff = min(2*backoff, cfg.RestartMaxBackoff)
	}
}

// Name returns the name the topology was submitted under.
func (r *Running) Name() string { return r.name }

// Activate lets spouts emit again after Deactivate.
func (r *Running) Activate() { r.active.Store(true) }

// Deactivate stops calling NextTuple; acks and fails are still delivered.
func (r *Running) Deactivate() { r.active.Store(false) }

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

// drain waits until no tree is pending; it reports false if ctx ended the
// wait first.
func (r *Running) drain(ctx context.Context) bool {
	poll := time.NewTicker(5 * time.Millisecond)
	defer poll.Stop()
	for r.Pending() > 0 {
		select {
		case <-poll.C:
		case <-ctx.Done():
			return false
		case <-r.done:
			return true
		}
	}
	return true
}

// kill stops the worker at once and waits for the supervisor to return.
func (r *Running) kill() {
	r.stopOnce.Do(func() { close(r.stop) })
	<-r.done
}

// Done is closed once the topology has stopped.
func (r *Running) Done() <-chan struct{} { return r.done }
