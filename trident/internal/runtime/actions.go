package runtime

import (
	"errors"
	"fmt"
	"maps"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/internal/clock"
	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/internal/coord"
	"github.com/squallstream/squall/txn"
)

// The master's actions, in the order the coordinator hands them out
// (persist, announce, start a commit, announce a success), and the
// outcomes of the trees they root.

func (m *master) persist(st coord.State) bool {
	rec := coordstore.Record{Committed: st.Committed, Attempts: map[txn.TxID]uint32{}}
	for _, a := range st.Attempts {
		rec.Attempts[a.TxID] = a.N
	}
	rec.Failures = failureCounts(st)
	v, err := m.store.SwapCoordinator(m.ctx, m.status.owner, m.version, rec)
	if errors.Is(err, coordstore.ErrConflict) {
		// An earlier try may have landed and reported an error (a lost
		// answer): then the stored record is the one written, and the
		// master goes on from its version rather than crashing.
		v, err = m.landed(rec, err)
	}
	if err != nil {
		m.retryOrCrash(fmt.Errorf("persisting the coordinator: %w", err))
		return false
	}
	m.version = v
	m.status.SetCommitted(st.Committed)
	return true
}

// landed reads the coordinator's record after a version conflict and
// returns its version if it is rec, the record this master meant to
// write; otherwise the conflict stands (another coordinator owns the
// stream).
func (m *master) landed(rec coordstore.Record, conflict error) (coordstore.Version, error) {
	stored, v, err := m.store.LoadCoordinator(m.ctx, m.name)
	if err != nil {
		return 0, errors.Join(conflict, err)
	}
	if stored.Committed != rec.Committed || !maps.Equal(stored.Attempts, rec.Attempts) || !maps.Equal(stored.Failures, rec.Failures) {
		return 0, conflict
	}
	return v, nil
}

func (m *master) announce(a txn.Attempt) {
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
	m.status.announced.Add(1)
	if a.N > 0 {
		m.status.replayed.Add(1)
	}
	m.out.EmitStream(streamBatch, masterMsg{streamBatch, a}, topology.Values{ann})
	m.publishInFlight()
}

func (m *master) startCommit(a txn.Attempt) {
	for _, s := range m.sources {
		if err := s.BeginCommit(m.ctx, a); err != nil {
			m.retryOrCrash(err)
			m.check(m.coord.Fail(a, coord.Committing, err))
			return
		}
	}
	m.committing[a] = m.clock.Now()
	m.out.EmitStream(streamFreeze, masterMsg{streamFreeze, a}, topology.Values{a})
}

func (m *master) succeed(a txn.Attempt) {
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
	for started := range m.committing {
		if started.TxID <= a.TxID {
			delete(m.committing, started)
		}
	}
	m.noteCommit(a.TxID)
	if m.tally != nil {
		m.tally.forget(a.TxID)
	}
	m.out.EmitStream(streamSuccess, nil, topology.Values{a})
	m.publishInFlight()
}

func (m *master) Ack(id any) {
	m.elapse()
	msg := id.(masterMsg)
	switch msg.stream {
	case streamBatch:
		m.processed(msg.attempt)
		m.coord.Ack(msg.attempt, coord.Processing)
	case streamFreeze:
		m.out.EmitStream(streamCommit, masterMsg{streamCommit, msg.attempt}, topology.Values{msg.attempt})
	case streamCommit:
		if t, ok := m.started[msg.attempt]; ok {
			m.status.latency.Record(clock.Since(m.clock, t))
		}
		if t, ok := m.committing[msg.attempt]; ok {
			m.status.commitLatency.Record(clock.Since(m.clock, t))
		}
		m.coord.Ack(msg.attempt, coord.Committing)
	}
	m.run()
	m.publishInFlight()
	m.wake()
}

func (m *master) Fail(id any) {
	m.elapse()
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
	m.setIdle(false)
	m.check(m.coord.Fail(msg.attempt, phase, reason))
	m.checkCorrupt(msg.attempt, reason)
	m.run()
	m.publishInFlight()
	m.wake()
}

var errBatchFailed = errors.New("trident: batch failed")

// check halts the topology when the coordinator has halted.
func (m *master) check(err error) {
	if err != nil && m.status.Halt(err) {
		m.out.ReportError(err)
	}
}

// retryOrCrash reports a retryable error and panics on a fatal one. A
// write rejected because another process took the topology over halts it
// for good instead: a restart would only be rejected again.
func (m *master) retryOrCrash(err error) {
	if errors.Is(err, ErrSuperseded) {
		m.status.AddFencingRejection()
		m.check(Superseded(m.status.owner, err))
		return
	}
	if !failure.IsRetryable(err) {
		panic(fmt.Errorf("trident: master coordinator: %w", err))
	}
	m.actionFailed(err)
}
