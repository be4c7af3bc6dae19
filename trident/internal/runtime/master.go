package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/squallstream/squall/internal/clock"
	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/internal/coord"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// announcement is the value of a $batch tuple: the attempt and, for every
// source, what its allocator decided about the batch.
type announcement struct {
	attempt txn.Attempt
	batches []spout.Batch
}

// masterMsg is the message id of the master's tracked tuples.
type masterMsg struct {
	stream  string
	attempt txn.Attempt
}

// ErrAttemptLimit is matched by the error that halts a topology whose batch
// failed Config.MaxAttempts times.
var ErrAttemptLimit = coord.ErrAttemptLimit

// master is the master coordinator spout: the shell around the pure batch
// coordinator. It executes the coordinator's actions in order — persist
// its state, announce a batch, start a commit, announce a success — and
// feeds it the outcome of the tuple trees it roots.
//
// A commit runs in two steps: a $freeze tree, in which every spout task
// freezes the batch's metadata, then a $commit tree, in which committers
// write state. So no state is written before a replay of the txid is
// guaranteed to be identical.
type master struct {
	topology.Wakeup // wakes the spout executor: see wake

	name        string   // the topology's
	sourceSpecs []Source // by source index
	cfg         Config
	store       coordstore.Store
	status      *Status
	ctx         context.Context
	clock       clock.Clock // Config.Topology.Clock, or the system clock
	out         *topology.SpoutCollector
	coord       *coord.Coordinator
	sources     []*spout.Allocator // by source index
	version     coordstore.Version

	started    map[txn.Attempt]time.Time // announcement time of attempts in flight
	committing map[txn.Attempt]time.Time // start of the commit phase of attempts committing
	pending    []coord.Action            // actions handed by Ready, not yet all done
	done       int                       // how many of pending are done
	lastTick   time.Time                 // when the coordinator's last tick was due (see elapse)
	tick       clock.Timer               // wakes the executor at nextTick (see wake)
	ready      bool
	inactive   bool

	retry   shellRetry
	corrupt map[txn.TxID]int // failures on corrupt state per txid, without MaxAttempts

	tally         *sourceTally // what the source tasks emitted per attempt (see masteridle.go)
	idle          bool         // the last processed batch carried nothing
	lastProcessed txn.TxID     // the highest txid whose processing completed
}

// Deactivate stops new batches; batches in flight still commit, so a
// deactivated topology drains (Running.Stop waits for that).
func (m *master) Deactivate() {
	if m.coord == nil {
		return // halted before Open
	}
	m.elapse()
	m.inactive = true
	m.ready = false
	m.coord.SetSpoutReady(false)
	m.run()
}

// Activate lets batches start again.
func (m *master) Activate() {
	m.inactive = false
	m.wake()
}

// wake is the one place where the master asks to run again: it is called
// whenever something the master waits on has happened (an ack or a fail
// moved the coordinator, the topology was activated) and after every
// NextTuple. The master is a topology.Waker: it wakes its executor at once
// if the coordinator has actions ready, and otherwise arms a timer of its
// clock for nextTick (when a tick can change the coordinator: a batch may
// start, a backoff ends, or spouts that hold batches back must be asked
// again) or for the end of a failed action's retry backoff. When no tick
// can change anything until an ack, a fail or an activation (the window
// is full, or the topology is deactivated), it arms no timer: those call
// wake themselves. So the executor need not poll it (Trident runs with a
// long spout idle wait, see trident.Config.Topology), and the master is
// not woken every BatchEmitInterval for nothing.
func (m *master) wake() {
	if m.coord == nil || m.status.isHalted() {
		return
	}
	next, ok := m.nextTick()
	if m.pending != nil || m.coord.HasReady() {
		if !m.waiting() {
			m.Notify()
			return
		}
		// An action failed and waits for its backoff: wake when it ends
		// (waking at once would spin until then).
		if !ok || m.retry.until.Before(next) {
			next, ok = m.retry.until, true
		}
	}
	if !ok {
		if m.tick != nil {
			m.tick.Stop()
		}
		return
	}
	d := next.Sub(m.clock.Now())
	if d <= 0 {
		m.Notify()
		return
	}
	if m.tick == nil {
		m.tick = m.clock.AfterFunc(d, m.Notify)
		return
	}
	m.tick.Reset(d)
}

// nextTick returns when the master must next tick the coordinator, and
// false if no tick can change anything until an ack, a fail or an
// activation. That is the tick the coordinator names (coord.NextTick),
// or, while the spouts hold batches back (Readier), the tick at which
// their answer next matters if it is sooner (coord.NextEmit): the master
// asks them again then, at every tick while the window has room and no
// retry backoff runs, not at all while the window is full. Before the
// first tick, it is now.
func (m *master) nextTick() (time.Time, bool) {
	if m.lastTick.IsZero() {
		return m.clock.Now(), true
	}
	n, ok := m.coord.NextTick()
	if !m.ready && !m.inactive {
		if e, eok := m.coord.NextEmit(); eok && (!ok || e < n) {
			n, ok = e, true
		}
	}
	if m.pollsWaiting() && !m.inactive {
		// Idle: ask the sources at every tick whether data waits, while a
		// batch could start if it did.
		if _, eok := m.coord.NextEmit(); eok {
			n, ok = 1, true
		}
	}
	return m.lastTick.Add(time.Duration(n) * m.cfg.BatchEmitInterval), ok
}

// elapse ticks the coordinator once for every BatchEmitInterval since its
// last tick was due, before anything else reaches it. Since the master is
// woken only for the ticks that can change the coordinator (see wake),
// the others arrive late, in one go (coord.Elapse), and the coordinator
// counts every tick that passed, as if it had been ticked every interval:
// the emit interval and retry backoffs, counted in ticks, last as long.
// Before the first tick (NextTuple's), it does nothing.
func (m *master) elapse() {
	if m.lastTick.IsZero() {
		return
	}
	if n := m.clock.Now().Sub(m.lastTick) / m.cfg.BatchEmitInterval; n > 0 {
		m.lastTick = m.lastTick.Add(n * m.cfg.BatchEmitInterval)
		m.check(m.coord.Elapse(int64(n)))
	}
}

func (m *master) Open(ctx context.Context, _ topology.TaskInfo, out *topology.SpoutCollector) error {
	m.ctx, m.out = ctx, out
	m.clock = clock.Or(m.cfg.Topology.Clock)
	m.started, m.committing = map[txn.Attempt]time.Time{}, map[txn.Attempt]time.Time{}
	if m.status.isHalted() {
		return nil // halted for good: NextTuple does nothing
	}
	rec, version, err := m.store.LoadCoordinator(ctx, m.name)
	if err != nil {
		return fmt.Errorf("loading the coordinator of %q: %w", m.name, err)
	}
	m.version = version
	st := coord.State{Committed: rec.Committed}
	for txid, n := range rec.Attempts {
		st.Attempts = append(st.Attempts, txn.Attempt{TxID: txid, N: n})
	}
	for txid, n := range rec.Failures {
		st.Failures = append(st.Failures, coord.Failures{TxID: txid, N: n})
	}
	if _, err := m.newCoordinator(st); err != nil {
		return err
	}
	m.status.SetCommitted(rec.Committed)
	for _, src := range m.sourceSpecs {
		a, err := src.NewAllocator(m.store, m.status.owner, src.ID)
		if err != nil {
			return fmt.Errorf("stream %q: %w", src.ID, err)
		}
		m.sources = append(m.sources, a)
	}
	m.ready = true
	return nil
}

func (m *master) NextTuple() {
	if m.status.isHalted() {
		return
	}
	if m.lastTick.IsZero() { // the first tick; later ones are due every interval after it
		m.lastTick = m.clock.Now()
		m.check(m.coord.Tick())
	}
	m.elapse()
	if m.idle && m.sourcesWaiting() {
		m.setIdle(false)
	}
	ready := !m.inactive
	next := m.coord.Committed() + 1
	for _, s := range m.sources {
		ready = ready && s.Ready(m.ctx, next)
	}
	if ready != m.ready {
		m.ready = ready
		m.coord.SetSpoutReady(ready)
	}
	m.run()
	m.wake()
}

// run executes the coordinator's actions in order. An action whose store
// call failed retryably is tried again on the next call.
func (m *master) run() {
	for !m.status.isHalted() {
		if m.pending == nil {
			if !m.coord.HasReady() {
				return
			}
			m.pending, m.done = m.coord.Ready(), 0
		}
		for m.done < len(m.pending) {
			if m.waiting() || !m.do(m.pending[m.done]) {
				return
			}
			m.done++
			m.retry.waits.Reset()
		}
		m.pending = nil
		m.coord.Advance()
	}
}

// do executes one action; it reports false if it must be tried again.
func (m *master) do(a coord.Action) bool {
	switch a.Kind {
	case coord.Persist:
		return m.persist(a.State)
	case coord.EmitBatch:
		m.announce(a.Attempt)
	case coord.Commit:
		m.startCommit(a.Attempt)
	case coord.Success:
		m.succeed(a.Attempt)
	}
	return true
}

func (m *master) Close() error {
	if m.tick != nil {
		m.tick.Stop()
	}
	var errs []error
	for _, s := range m.sources {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}
