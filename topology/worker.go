package topology

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/squallstream/squall/internal/notify"
)

// Crash describes why a worker stopped: a panic or a fatal error in a spout
// or bolt.
type Crash struct {
	Component string
	Task      TaskID
	Time      time.Time
	Err       error
	Stack     []byte // the goroutine's stack at the panic; nil for returned errors
}

func (c *Crash) Error() string {
	return fmt.Sprintf("topology: worker crashed in %s task %d: %v", c.Component, c.Task, c.Err)
}

// Unwrap returns the cause.
func (c *Crash) Unwrap() error { return c.Err }

// worker is one incarnation of a running topology: every executor of every
// component, their queues and the acker tasks. The first crash of any
// executor stops all of them.
type worker struct {
	plan    *plan
	cfg     Config
	log     *slog.Logger
	metrics *metrics
	errors  *errorLog
	active  *activation

	ctx      context.Context // cancelled when the worker stops
	cancel   context.CancelFunc
	stopping <-chan struct{}

	boltIn  []chan []Tuple
	ackerIn []chan []ackerMsg
	spoutIn []chan []spoutMsg
	// Per executor: where emptied batches come back to be filled again
	// (recycle.go). For a remote executor, its peer's sender gives them
	// back (peer.freeTuples …); a local one gives back what it received.
	boltFree  []chan []Tuple
	ackerFree []chan []ackerMsg
	spoutFree []chan []spoutMsg
	pending   []atomic.Int64  // per spout executor: trees pending
	quiet     []atomic.Uint64 // per spout executor: the last Deactivate it confirmed (activation)

	incarnation int            // 0 for the first worker of a topology, +1 per restart
	drained     *notify.Signal // broadcast when a spout executor's pending count drops to 0
	losses      *peerLosses    // cluster mode: peers lost (peerloss.go); nil otherwise

	crashMu sync.Mutex
	crash   *Crash
	wg      sync.WaitGroup
}

func newWorker(p *plan, m *metrics, errs *errorLog, active *activation, incarnation int, drained *notify.Signal, net *network) *worker {
	ctx, cancel := context.WithCancel(context.Background())
	w := &worker{plan: p, cfg: p.cfg, log: p.cfg.Logger, metrics: m, errors: errs, active: active,
		ctx: ctx, cancel: cancel, stopping: ctx.Done(), incarnation: incarnation, drained: drained}
	if net != nil {
		w.losses = net.losses
	}
	n := len(p.execs)
	w.boltIn = make([]chan []Tuple, n)
	w.ackerIn = make([]chan []ackerMsg, n)
	w.spoutIn = make([]chan []spoutMsg, n)
	w.boltFree = make([]chan []Tuple, n)
	w.ackerFree = make([]chan []ackerMsg, n)
	w.spoutFree = make([]chan []spoutMsg, n)
	w.pending = make([]atomic.Int64, n)
	w.quiet = make([]atomic.Uint64, n)
	for i, e := range p.execs {
		if !p.local(i) {
			// A remote executor's queues are its worker's peer's: the
			// outbox sends to them as to a local executor, with the same
			// backpressure, and the peer's sender forwards them.
			pe := net.peers[p.cluster.execPeer[i]]
			w.boltIn[i], w.ackerIn[i], w.spoutIn[i] = pe.tuples, pe.acks, pe.outcomes
			w.boltFree[i], w.ackerFree[i], w.spoutFree[i] = pe.freeTuples, pe.freeAcks, pe.freeOutcomes
			continue
		}
		switch e.kind {
		case boltExec:
			w.boltIn[i] = make(chan []Tuple, w.cfg.QueueCapacity)
			w.boltFree[i] = make(chan []Tuple, w.cfg.QueueCapacity)
		case ackerExec:
			w.ackerIn[i] = make(chan []ackerMsg, w.cfg.QueueCapacity)
			w.ackerFree[i] = make(chan []ackerMsg, w.cfg.QueueCapacity)
		case spoutExec:
			w.spoutIn[i] = make(chan []spoutMsg, w.cfg.QueueCapacity)
			w.spoutFree[i] = make(chan []spoutMsg, w.cfg.QueueCapacity)
		}
	}
	return w
}

// run starts every executor and returns when the worker has stopped, either
// because stop was closed or because an executor crashed. It returns the
// crash, or nil after a requested stop.
func (w *worker) run(stop <-chan struct{}) *Crash {
	for i := range w.plan.execs {
		if w.plan.local(i) {
			w.wg.Add(1)
			go w.runExecutor(i)
		}
	}
	select {
	case <-stop:
		w.cancel()
	case <-w.stopping:
	}
	w.wg.Wait()
	w.crashMu.Lock()
	defer w.crashMu.Unlock()
	return w.crash
}

func (w *worker) runExecutor(i int) {
	defer w.wg.Done()
	p := &w.plan.execs[i]
	var r runner
	defer func() {
		rec := recover()
		if rec == nil {
			return
		}
		err, ok := rec.(error)
		if ok {
			err = fmt.Errorf("panic: %w", err)
		} else {
			err = fmt.Errorf("panic: %v", rec)
		}
		task := p.tasks[0]
		if r != nil {
			task = r.base().current
		}
		w.fail(&Crash{Component: p.name(), Task: task, Time: w.cfg.Clock.Now(), Err: err, Stack: debug.Stack()})
	}()
	r = newExecutor(w, i)
	defer r.cleanup()
	r.run()
}

// fail records the first crash and stops the worker.
func (w *worker) fail(c *Crash) {
	w.crashMu.Lock()
	first := w.crash == nil
	if first {
		w.crash = c
	}
	w.crashMu.Unlock()
	if first {
		w.log.Error("worker crashed; stopping every executor", "component", c.Component, "task", c.Task, "err", c.Err)
	}
	w.cancel()
}

// fatal stops the worker because task returned a fatal error.
func (w *worker) fatal(component string, task TaskID, err error) {
	w.fail(&Crash{Component: component, Task: task, Time: w.cfg.Clock.Now(), Err: err})
}

// stopped reports whether the worker is stopping.
func (w *worker) stopped() bool {
	select {
	case <-w.stopping:
		return true
	default:
		return false
	}
}

// pendingTrees returns the number of trees pending in all spout tasks, as
// last published by their executors.
func (w *worker) pendingTrees() int64 {
	var n int64
	for i := range w.pending {
		n += w.pending[i].Load()
	}
	return n
}

// quietSince reports whether every local spout executor has confirmed the
// off-th Deactivate or a later one.
func (w *worker) quietSince(off uint64) bool {
	for i, e := range w.plan.execs {
		if e.kind == spoutExec && w.plan.local(i) && w.quiet[i].Load() < off {
			return false
		}
	}
	return true
}

var errNilInstance = errors.New("the component's constructor returned nil")
