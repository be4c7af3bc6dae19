package trident

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/internal/clock"
	"github.com/squallstream/squall/internal/hist"
	"github.com/squallstream/squall/internal/notify"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/internal/coord"
	"github.com/squallstream/squall/trident/spout"
)

// announcement is the value of a $batch tuple: the attempt and, for every
// source, what its coordinator decided about the batch.
type announcement struct {
	attempt Attempt
	batches []spout.Batch
}

// masterMsg is the message id of the master's tracked tuples.
type masterMsg struct {
	stream  string
	attempt Attempt
}

// status is shared by the master, the bolts and Running.
type status struct {
	owner     coordstore.Fence // this submission's generation of the topology
	committed atomic.Uint64
	halted    atomic.Pointer[error]
	haltOnce  sync.Once
	stopped   chan struct{} // closed by halt
	rejected  atomic.Uint64

	failedAttempts atomic.Uint64 // failed batch attempts and master actions
	quarantined    atomic.Uint64 // corrupt stored values moved aside
	starts         atomic.Int64  // master starts: more than one after a worker restart

	mu       sync.Mutex
	failures map[state.TxID]error // why the latest attempt at a txid failed

	latency hist.Histogram // batch latencies: announcement of the committed attempt to the end of its commit
	commits notify.Signal  // broadcast on every change of committed
}

// setCommitted publishes the last committed txid and wakes the goroutines
// in Running.WaitCommitted.
func (s *status) setCommitted(txid state.TxID) {
	s.committed.Store(uint64(txid))
	s.commits.Broadcast()
}

func newStatus(owner coordstore.Fence) *status {
	return &status{owner: owner, stopped: make(chan struct{})}
}

// halt stops the topology for good with err: the master starts no batch
// and no committer writes state after it. Only the first error is kept;
// halt reports whether err was it.
func (s *status) halt(err error) bool {
	first := false
	s.haltOnce.Do(func() {
		s.halted.Store(&err)
		close(s.stopped)
		first = true
	})
	return first
}

// Err returns the error that halted the topology, or nil.
func (s *status) Err() error {
	if p := s.halted.Load(); p != nil {
		return *p
	}
	return nil
}

// recordFailure remembers why a batch failed, for the coordinator's
// attempt-limit error.
func (s *status) recordFailure(txid state.TxID, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failures == nil {
		s.failures = map[state.TxID]error{}
	}
	s.failures[txid] = err
}

// takeFailure returns and forgets the recorded cause of txid's failure.
func (s *status) takeFailure(txid state.TxID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.failures[txid]
	delete(s.failures, txid)
	return err
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
	t       *Topology
	cfg     Config
	store   coordstore.Store
	status  *status
	ctx     context.Context
	clock   clock.Clock // Config.Topology.Clock, or the system clock
	out     *topology.SpoutCollector
	coord   *coord.Coordinator
	sources []*spout.Coordinator
	version coordstore.Version

	started  map[Attempt]time.Time // announcement time of attempts in flight
	pending  []coord.Action        // actions handed by Ready, not yet all done
	done     int                   // how many of pending are done
	lastTick time.Time
	ready    bool
	inactive bool

	retry   shellRetry
	corrupt map[state.TxID]int // failures on corrupt state per txid, without MaxAttempts
}

// Deactivate stops new batches; batches in flight still commit, so a
// deactivated topology drains (Running.Stop waits for that).
func (m *master) Deactivate() {
	if m.coord == nil {
		return // halted before Open
	}
	m.inactive = true
	m.ready = false
	m.coord.SetSpoutReady(false)
	m.run()
}

// Activate lets batches start again.
func (m *master) Activate() {
	m.inactive = false
}

func (m *master) Open(ctx context.Context, _ topology.TaskInfo, out *topology.SpoutCollector) error {
	m.ctx, m.out = ctx, out
	m.clock = clock.Or(m.cfg.Topology.Clock)
	m.started = map[Attempt]time.Time{}
	if m.status.halted.Load() != nil {
		return nil // halted for good: NextTuple does nothing
	}
	rec, version, err := m.store.LoadCoordinator(ctx, m.t.name)
	if err != nil {
		return fmt.Errorf("loading the coordinator of %q: %w", m.t.name, err)
	}
	m.version = version
	st := coord.State{Committed: rec.Committed}
	for txid, n := range rec.Attempts {
		st.Attempts = append(st.Attempts, coord.Attempt{TxID: txid, N: n})
	}
	for txid, n := range rec.Failures {
		st.Failures = append(st.Failures, coord.Failures{TxID: txid, N: n})
	}
	if _, err := m.newCoordinator(st); err != nil {
		return err
	}
	m.status.setCommitted(rec.Committed)
	for _, n := range m.t.sources {
		sc, err := n.source().coordinator(m.store, m.status.owner, n.source().id)
		if err != nil {
			return fmt.Errorf("stream %q: %w", n.source().id, err)
		}
		m.sources = append(m.sources, sc)
	}
	m.ready = true
	return nil
}

func (m *master) NextTuple() {
	if m.status.halted.Load() != nil {
		return
	}
	if now := m.clock.Now(); now.Sub(m.lastTick) >= m.cfg.BatchEmitInterval {
		m.lastTick = now
		m.check(m.coord.Tick())
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
}

// run executes the coordinator's actions in order. An action whose store
// call failed retryably is tried again on the next call.
func (m *master) run() {
	for m.status.halted.Load() == nil {
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

func (m *master) persist(st coord.State) bool {
	rec := coordstore.Record{Committed: st.Committed, Attempts: map[state.TxID]uint32{}}
	for _, a := range st.Attempts {
		rec.Attempts[a.TxID] = a.N
	}
	rec.Failures = failureCounts(st)
	v, err := m.store.SwapCoordinator(m.ctx, m.status.owner, m.version, rec)
	if err != nil {
		m.retryOrCrash(fmt.Errorf("persisting the coordinator: %w", err))
		return false
	}
	m.version = v
	m.status.setCommitted(st.Committed)
	return true
}

func (m *master) announce(a Attempt) {
	ann := announcement{attempt: a}
	for _, s := range m.sources {
		b, err := s.Begin(m.ctx, a)
		if err != nil {
			m.retryOrCrash(err)
			m.check(m.coord.Fail(a, coord.Processing, err))
			return
		}
		b.Committed = m.coord.Committed()
		ann.batches = append(ann.batches, b)
	}
	m.started[a] = m.clock.Now()
	m.out.EmitStream(streamBatch, masterMsg{streamBatch, a}, topology.Values{ann})
}

func (m *master) startCommit(a Attempt) {
	for _, s := range m.sources {
		if err := s.BeginCommit(m.ctx, a); err != nil {
			m.retryOrCrash(err)
			m.check(m.coord.Fail(a, coord.Committing, err))
			return
		}
	}
	m.out.EmitStream(streamFreeze, masterMsg{streamFreeze, a}, topology.Values{a})
}

func (m *master) succeed(a Attempt) {
	for _, s := range m.sources {
		if err := s.Success(m.ctx, a.TxID); err != nil {
			m.retryOrCrash(err)
			m.out.ReportError(err)
		}
	}
	for started := range m.started {
		if started.TxID <= a.TxID {
			delete(m.started, started)
		}
	}
	m.noteCommit(a.TxID)
	m.out.EmitStream(streamSuccess, nil, topology.Values{a})
}

func (m *master) Ack(id any) {
	msg := id.(masterMsg)
	switch msg.stream {
	case streamBatch:
		m.coord.Ack(msg.attempt, coord.Processing)
	case streamFreeze:
		m.out.EmitStream(streamCommit, masterMsg{streamCommit, msg.attempt}, topology.Values{msg.attempt})
	case streamCommit:
		if t, ok := m.started[msg.attempt]; ok {
			m.status.latency.Record(clock.Since(m.clock, t))
		}
		m.coord.Ack(msg.attempt, coord.Committing)
	}
	m.run()
}

func (m *master) Fail(id any) {
	msg := id.(masterMsg)
	phase := coord.Committing
	if msg.stream == streamBatch {
		phase = coord.Processing
	}
	reason := fmt.Errorf("%w: %s tree of %v", errBatchFailed, msg.stream, msg.attempt)
	if cause := m.status.takeFailure(msg.attempt.TxID); cause != nil {
		reason = fmt.Errorf("%w: %w", reason, cause)
	}
	m.noteFailure(reason, false)
	m.check(m.coord.Fail(msg.attempt, phase, reason))
	m.checkCorrupt(msg.attempt, reason)
	m.run()
}

var errBatchFailed = errors.New("trident: batch failed")

// check halts the topology when the coordinator has halted.
func (m *master) check(err error) {
	if err != nil && m.status.halt(err) {
		m.out.ReportError(err)
	}
}

// retryOrCrash reports a retryable error and panics on a fatal one. A
// write rejected because another process took the topology over halts it
// for good instead: a restart would only be rejected again.
func (m *master) retryOrCrash(err error) {
	if errors.Is(err, ErrSuperseded) {
		m.check(superseded(m.status.owner, err))
		return
	}
	if !failure.IsRetryable(err) {
		panic(fmt.Errorf("trident: master coordinator: %w", err))
	}
	m.actionFailed(err)
}

func (m *master) Close() error {
	var errs []error
	for _, s := range m.sources {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}
