package completion

import (
	"slices"

	"github.com/squallstream/squall/txn"
)

// Machine tracks the batch attempts of one task. H is the shell's handle
// type (a tuple). The zero Machine is not usable; call New.
type Machine[H any] struct {
	cfg      Config
	late     map[string]bool
	mixed    bool // fed both by early and by late upstream stages
	batches  map[txn.TxID]*record[H]
	finished map[txn.TxID]uint32 // the attempt that finished each txid, until its success
	queue    []Action[H]
	head     int
	scratch  []txn.TxID
}

// record is the machine's record of one attempt at a batch.
type record[H any] struct {
	attempt  txn.Attempt
	received int // data tuples counted
	expected int // data tuples upstream tasks say they sent
	reports  int
	held     slot[H] // the first report (the late one in a mixed stage)
	commit   slot[H]
	early    early[H]
	phase    Phase
	err      error // why it failed
}

// early counts the processing-phase share of a batch in a mixed stage.
type early[H any] struct {
	reports, expected, received int
	held                        slot[H]
}

// slot holds at most one handle.
type slot[H any] struct {
	h  H
	ok bool
}

func (s *slot[H]) take() (H, bool) {
	h, ok := s.h, s.ok
	*s = slot[H]{}
	return h, ok
}

// New returns a machine for a stage of shape cfg.
func New[H any](cfg Config) (*Machine[H], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := &Machine[H]{
		cfg:      cfg,
		late:     map[string]bool{},
		mixed:    len(cfg.Late) > 0 && cfg.EarlyReports > 0,
		batches:  map[txn.TxID]*record[H]{},
		finished: map[txn.TxID]uint32{},
	}
	for _, c := range cfg.Late {
		m.late[c] = true
	}
	return m, nil
}

// Next returns the next queued action, if any.
func (m *Machine[H]) Next() (Action[H], bool) {
	if m.head == len(m.queue) {
		if m.head > 0 {
			clear(m.queue)
			m.queue, m.head = m.queue[:0], 0
		}
		return Action[H]{}, false
	}
	a := m.queue[m.head]
	m.head++
	return a, true
}

func (m *Machine[H]) push(a Action[H]) { m.queue = append(m.queue, a) }

func (m *Machine[H]) ack(h H)  { m.push(Action[H]{Kind: Ack, Handle: h}) }
func (m *Machine[H]) fail(h H) { m.push(Action[H]{Kind: Fail, Handle: h}) }

// Data counts a data tuple of attempt a and reports whether the shell
// should process it: false for an attempt that failed, is older than the
// recorded one or is not newer than the finished one. early is set for a
// tuple from an upstream stage that reports in the processing phase.
func (m *Machine[H]) Data(a txn.Attempt, early bool) bool {
	r := m.track(a)
	if r == nil || r.phase == Failed {
		return false
	}
	r.received++
	if early {
		r.early.received++
	}
	return true
}

// Report counts the report of one task of upstream component from: it
// sent count tuples of attempt a. The machine holds h or queues its ack
// or fail.
func (m *Machine[H]) Report(a txn.Attempt, from string, count int, h H) {
	r := m.track(a)
	if r == nil {
		m.ack(h)
		return
	}
	r.reports++
	r.expected += count
	switch {
	case m.cfg.Committer:
		m.ack(h)
	case m.mixed && !m.late[from]:
		e := &r.early
		e.reports++
		e.expected += count
		if !e.held.ok {
			e.held = slot[H]{h, true}
		} else {
			m.ack(h)
		}
		if !m.checkEarly(r) {
			return
		}
	case !r.held.ok:
		r.held = slot[H]{h, true}
	default:
		m.ack(h)
	}
	m.checkFinish(r)
}

// Commit starts the commit of attempt a, whose commit tuple is h. A stage
// fed in the commit phase may have received nothing of a yet, and takes a
// newer attempt at its commit.
func (m *Machine[H]) Commit(a txn.Attempt, h H) {
	r := m.batches[a.TxID]
	if len(m.cfg.Late) > 0 && (r == nil || r.attempt.N < a.N) {
		r = m.track(a)
	}
	if r == nil || r.attempt.N != a.N {
		m.push(Action[H]{Kind: Unprocessed, Attempt: a})
		m.fail(h)
		return
	}
	if old, ok := r.commit.take(); ok {
		m.fail(old) // a second commit of one attempt: never sent, never leaked
	}
	r.commit = slot[H]{h, true}
	m.checkFinish(r)
}

// Fail marks attempt a failed because running an operation on one of its
// tuples failed with err: its held handles fail.
func (m *Machine[H]) Fail(a txn.Attempt, err error) {
	if r := m.batches[a.TxID]; r != nil && r.attempt == a && r.phase != Finishing {
		m.failRecord(r, err)
	}
}

// Finished takes the result of the final step of attempt a, which the
// shell ran for a Finish action. On success the anchor is acked and the
// attempt dropped and remembered as finished until its success; on error
// the attempt failed.
func (m *Machine[H]) Finished(a txn.Attempt, err error) {
	r := m.batches[a.TxID]
	if r == nil || r.attempt != a || r.phase != Finishing {
		return
	}
	if err != nil {
		m.failRecord(r, err)
		return
	}
	delete(m.batches, a.TxID)
	m.finished[a.TxID] = a.N
	anchor := &r.held
	if m.cfg.Committer {
		anchor = &r.commit
	}
	if h, ok := anchor.take(); ok {
		m.ack(h)
	}
	m.releaseWith(r, Ack) // nothing else is held when the counts add up
	m.push(Action[H]{Kind: Drop, Attempt: a})
}

// Success forgets every attempt up to txid, failing the handles they hold.
func (m *Machine[H]) Success(txid txn.TxID) {
	m.scratch = m.scratch[:0]
	for t := range m.batches {
		if t <= txid {
			m.scratch = append(m.scratch, t)
		}
	}
	slices.Sort(m.scratch)
	for _, t := range m.scratch {
		m.abandon(m.batches[t])
	}
	for t := range m.finished {
		if t <= txid {
			delete(m.finished, t)
		}
	}
}

// Status returns the recorded attempt of txid and its phase (zero if none).
func (m *Machine[H]) Status(txid txn.TxID) (txn.Attempt, Phase) {
	r := m.batches[txid]
	if r == nil {
		return txn.Attempt{}, 0
	}
	return r.attempt, r.phase
}

// Err returns why the recorded attempt of txid failed, if it did.
func (m *Machine[H]) Err(txid txn.TxID) error {
	if r := m.batches[txid]; r != nil {
		return r.err
	}
	return nil
}

// Len returns the number of txids the machine remembers: recorded attempts
// and finished ones.
func (m *Machine[H]) Len() int { return len(m.batches) + len(m.finished) }
