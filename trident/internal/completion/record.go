package completion

import (
	"errors"

	"github.com/squallstream/squall/txn"
)

// errMismatch is the recorded failure of an attempt whose counts did not
// add up (the shell reports its own error for the Mismatch action).
var errMismatch = errors.New("completion: tuple count mismatch")

// track returns the record of attempt a, replacing the record of an older
// attempt at the same txid; it returns nil for an attempt older than the
// recorded one or not newer than the finished one.
func (m *Machine[H]) track(a txn.Attempt) *record[H] {
	if n, ok := m.finished[a.TxID]; ok && a.N <= n {
		return nil
	}
	r := m.batches[a.TxID]
	switch {
	case r != nil && r.attempt.N == a.N:
		return r
	case r != nil && r.attempt.N > a.N:
		return nil
	case r != nil:
		m.abandon(r)
	}
	r = &record[H]{attempt: a, phase: Open}
	m.batches[a.TxID] = r
	return r
}

// abandon forgets a record, failing the handles it holds.
func (m *Machine[H]) abandon(r *record[H]) {
	m.releaseWith(r, Fail)
	delete(m.batches, r.attempt.TxID)
	m.push(Action[H]{Kind: Drop, Attempt: r.attempt})
}

// releaseWith queues an action of kind k (Ack or Fail) for every handle r
// holds.
func (m *Machine[H]) releaseWith(r *record[H], k Kind) {
	for _, s := range []*slot[H]{&r.held, &r.early.held, &r.commit} {
		if h, ok := s.take(); ok {
			m.push(Action[H]{Kind: k, Handle: h})
		}
	}
}

// failRecord marks r failed: its handles fail, and so will its later ones.
func (m *Machine[H]) failRecord(r *record[H], err error) {
	r.phase, r.err = Failed, err
	m.releaseWith(r, Fail)
}

// mismatch fails r for counts that do not add up.
func (m *Machine[H]) mismatch(r *record[H], early bool, expected, arrived int) {
	m.push(Action[H]{Kind: Mismatch, Attempt: r.attempt, Early: early, Expected: expected, Arrived: arrived})
	m.failRecord(r, errMismatch)
}

// checkEarly acks the held processing-phase report once every early report
// and every tuple they counted arrived. It returns false if the attempt
// failed (now or before).
func (m *Machine[H]) checkEarly(r *record[H]) bool {
	e := &r.early
	if r.phase == Failed {
		m.releaseWith(r, Fail)
		return false
	}
	if !e.held.ok || e.reports < m.cfg.EarlyReports {
		return true
	}
	if e.received != e.expected {
		m.mismatch(r, true, e.expected, e.received)
		return false
	}
	h, _ := e.held.take()
	m.ack(h)
	return true
}

// checkFinish queues Finish once every report and every counted tuple
// arrived (and, for a committer, the commit).
func (m *Machine[H]) checkFinish(r *record[H]) {
	if r.phase == Failed {
		m.releaseWith(r, Fail)
		return
	}
	if r.phase == Finishing || r.reports < m.cfg.Reports {
		return
	}
	if r.received != r.expected {
		m.mismatch(r, false, r.expected, r.received)
		return
	}
	if m.cfg.Committer && !r.commit.ok {
		r.phase = Waiting
		return
	}
	anchor := r.held.h
	if m.cfg.Committer {
		anchor = r.commit.h
	}
	r.phase = Finishing
	m.push(Action[H]{Kind: Finish, Attempt: r.attempt, Handle: anchor})
}
