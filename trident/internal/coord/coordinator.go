package coord

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/internal/backoff"
	"github.com/squallstream/squall/txn"
)

// slot is the coordinator's record of one txid in its window.
type slot struct {
	used     bool   // an attempt number was used for this txid
	attempt  uint32 // the highest attempt number used; current if active
	status   Status // zero when inactive
	deadline int64  // tick at which the current phase times out
	failures int    // failures counted against Config.MaxAttempts
}

// Coordinator is the batch coordinator state machine. It is not safe for
// concurrent use: one goroutine (the shell) owns it.
//
// Its window is the txids committed+1 .. committed+MaxBatchesInFlight. The
// active txids always form a prefix of the window: emission fills the
// lowest inactive txids first, a commit removes the lowest active one, and
// a failure deactivates a txid and everything after it.
type Coordinator struct {
	cfg       Config
	committed txn.TxID
	slots     []slot            // slots[t % len(slots)] records txid t of the window
	active    int               // active txids: committed+1 .. committed+active
	beyond    map[txn.TxID]slot // recovered attempts and failure counts beyond the window

	now      int64 // ticks seen
	lastEmit int64 // tick of the last emission
	emitted  bool  // whether anything was emitted yet
	paused   bool  // the spouts are not ready
	idle     bool  // the last processed batch was empty: IdleInterval throttles
	err      error // non-nil once halted

	retries backoff.Sequence // counts the failures since the last commit
	retryAt int64            // no emission before this tick

	dirty   bool     // the durable state changed since the last Persist
	step    []Action // announcements of the current input
	actions []Action // queued for the shell
	handed  int      // actions returned by the last Ready
}

// New returns a coordinator that resumes from st, the last State the shell
// persisted (the zero State for a new stream). The next batch it emits is
// st.Committed+1, and every attempt number it uses is higher than the ones
// recorded in st.
//
// The coordinator starts with the spouts ready and emits nothing until its
// first input: the shell normally calls Tick right away.
func New(cfg Config, st State) (*Coordinator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	w := cfg.window()
	c := &Coordinator{cfg: cfg, committed: st.Committed, slots: make([]slot, w),
		retries: backoff.Sequence{Backoff: backoff.New(int64(cfg.RetryBackoff), int64(cfg.MaxRetryBackoff), cfg.Seed)}}
	for _, f := range st.Failures {
		c.restore(f.TxID, func(s *slot) { s.failures = max(s.failures, int(f.N)) })
	}
	for _, a := range st.Attempts {
		c.restore(a.TxID, func(s *slot) {
			if !s.used || a.N > s.attempt {
				s.used, s.attempt = true, a.N
			}
		})
	}
	return c, nil
}

// restore applies f to the record of recovered txid t: a slot of the
// window, or a record kept until the window reaches t. A committed t is
// ignored: nothing will run it again.
func (c *Coordinator) restore(t txn.TxID, f func(*slot)) {
	switch {
	case t <= c.committed:
	case t <= c.committed+txn.TxID(len(c.slots)):
		f(c.slot(t))
	default:
		if c.beyond == nil {
			c.beyond = make(map[txn.TxID]slot)
		}
		s := c.beyond[t]
		f(&s)
		c.beyond[t] = s
	}
}

func (c *Coordinator) slot(t txn.TxID) *slot {
	return &c.slots[uint64(t)%uint64(len(c.slots))]
}

// current returns the slot of a if a is the current attempt of an active
// txid and is in phase p, and nil for anything stale or unknown.
func (c *Coordinator) current(a txn.Attempt, p Status) *slot {
	if a.TxID <= c.committed || a.TxID > c.committed+txn.TxID(c.active) {
		return nil
	}
	s := c.slot(a.TxID)
	if s.status != p || s.attempt != a.N || p == Processed {
		return nil
	}
	return s
}

// Ack reports that phase p of attempt a completed: its processing
// (p == Processing) or its commit (p == Committing). An ack for anything
// else (a stale attempt, a phase the attempt is not in, a duplicate) is
// ignored.
//
// Naming the phase keeps a late or duplicated processing ack from being
// taken for the commit's: Storm tells them apart only by timing.
func (c *Coordinator) Ack(a txn.Attempt, p Status) {
	if c.err != nil {
		return
	}
	s := c.current(a, p)
	if s == nil {
		return
	}
	if p == Processing {
		s.status = Processed
	} else {
		c.committed = a.TxID // a.TxID is committed+1: only it can commit
		c.active--
		*s = slot{} // now records txid committed+len(slots)
		next := c.committed + txn.TxID(len(c.slots))
		if r, ok := c.beyond[next]; ok {
			*s = r
			delete(c.beyond, next)
		}
		c.retries.Reset()
		c.dirty = true
		c.step = append(c.step, Action{Kind: Success, Attempt: a})
	}
	c.sync()
	c.flush()
}

// Fail reports that phase p of attempt a failed (p is Processing or
// Committing), for reason, which may be nil. The txid and every later
// active txid are discarded and emitted again with higher attempt numbers;
// a failed commit re-runs the whole batch. A fail for anything else (a
// stale attempt, a phase the attempt is not in) is ignored. Fail returns a
// non-nil error once the coordinator has halted.
func (c *Coordinator) Fail(a txn.Attempt, p Status, reason error) error {
	if c.err != nil {
		return c.err
	}
	if s := c.current(a, p); s != nil {
		c.fail(a, s, reason)
		c.sync()
		c.flush()
	}
	return c.err
}

func (c *Coordinator) fail(a txn.Attempt, s *slot, reason error) {
	if !failure.IsUnavailable(reason) && c.count(a, s, reason) {
		return
	}
	if d := c.retries.Next(); d > 0 {
		c.retryAt = c.now + d
	}
	end := c.committed + txn.TxID(c.active)
	for t := a.TxID; t <= end; t++ {
		c.slot(t).status = 0
	}
	c.active = int(a.TxID - c.committed - 1)
}

// count counts a failure of attempt a against Config.MaxAttempts and
// reports whether it halted the coordinator. With a limit, the count is
// durable: the next Persist carries it.
func (c *Coordinator) count(a txn.Attempt, s *slot, reason error) bool {
	s.failures++
	if c.cfg.MaxAttempts == 0 {
		return false
	}
	if s.failures >= c.cfg.MaxAttempts {
		c.err = &AttemptLimitError{Last: a, Failures: s.failures, Reason: reason}
		return true
	}
	c.dirty = true
	return false
}

// Restarted tells a coordinator just created with New that its
// predecessor stopped abnormally (the worker crashed) rather than being
// started for the first time, for reason. If the lowest uncommitted txid
// had been emitted, its attempt died with the predecessor: that counts as
// a failure against Config.MaxAttempts (unless reason is an outage), so a
// batch that crashes the worker every time halts the coordinator instead
// of looping. Restarted must come before any other input; later calls are
// ignored. It returns a non-nil error once the coordinator has halted.
func (c *Coordinator) Restarted(reason error) error {
	if c.err != nil || c.now > 0 || c.active > 0 {
		return c.err
	}
	t := c.committed + 1
	if s := c.slot(t); s.used && !failure.IsUnavailable(reason) {
		c.count(txn.Attempt{TxID: t, N: s.attempt}, s, reason)
	}
	c.sync()
	c.flush()
	return c.err
}

// Tick advances logical time by one tick: batches whose phase has lasted
// Config.BatchTimeout ticks fail with ErrBatchTimeout, and a throttled
// emission may proceed. Tick returns a non-nil error once the coordinator
// has halted.
func (c *Coordinator) Tick() error {
	if c.err != nil {
		return c.err
	}
	c.now++
	if c.cfg.BatchTimeout > 0 {
		for i := 1; i <= c.active; i++ {
			t := c.committed + txn.TxID(i)
			s := c.slot(t)
			if s.status != Processed && c.now >= s.deadline {
				a := txn.Attempt{TxID: t, N: s.attempt}
				c.fail(a, s, fmt.Errorf("%w: %s while %s", ErrBatchTimeout, a, s.status))
				break // every later txid was discarded with it
			}
		}
	}
	c.sync()
	c.flush()
	return c.err
}

// Elapse advances logical time by n ticks: it is n calls of Tick, in a
// time that does not grow with n, because the ticks before the one
// NextTick names are only counted. A shell that is not woken for ticks
// that cannot change anything delivers them late with Elapse, before any
// other input, so that the coordinator counts exactly the ticks that
// passed. Elapse returns a non-nil error once the coordinator has halted.
func (c *Coordinator) Elapse(n int64) error {
	for n > 0 && c.err == nil {
		k, ok := c.NextTick()
		if !ok || k > n {
			k = n
		}
		c.now += k - 1 // ticks that change nothing
		n -= k
		c.Tick()
	}
	return c.err
}

// NextTick reports which tick from now can next change the coordinator
// if no other input arrives: with ticks = k, the k-th Tick (k >= 1) may
// queue an action or time out a batch, and the ones before it only count.
// That is the tick at which a batch can be emitted (the window has room,
// the spouts are ready, and the emit interval and the retry backoff have
// passed) or the earliest at which an active batch times out. ok is false
// when no tick can change anything until Ack, Fail or SetSpoutReady, or
// once the coordinator has halted.
//
// NextTick is a query: it changes nothing. A shell uses it to sleep until
// that tick instead of ticking every interval (see Elapse).
func (c *Coordinator) NextTick() (ticks int64, ok bool) {
	if c.err != nil {
		return 0, false
	}
	at := int64(math.MaxInt64)
	if e, ok := c.emitAt(); ok && !c.paused {
		at = e
	}
	if c.cfg.BatchTimeout > 0 {
		for i := 1; i <= c.active; i++ {
			if s := c.slot(c.committed + txn.TxID(i)); s.status != Processed {
				at = min(at, max(c.now+1, s.deadline))
			}
		}
	}
	if at == math.MaxInt64 {
		return 0, false
	}
	return at - c.now, true
}

// NextEmit reports which tick from now is the first at which a batch
// could be emitted if the spouts were ready then, with no other input and
// no batch timing out before it (NextTick names a timeout's tick): with
// ticks = k, the window has room and the emit interval and the retry
// backoff have passed at the k-th Tick (k >= 1), and at no tick before it
// (when k is 1, a batch may also be emitted now, by SetSpoutReady(true)).
// ok is false when the window is full, so that only Ack, Fail or a
// timeout can make room, or once the coordinator has halted.
//
// Unlike NextTick, NextEmit does not depend on SetSpoutReady: it is when
// the spouts' readiness next matters. A shell that asks its spouts again
// while they hold batches back (Storm's isReady) need ask them only at
// that tick: at the ticks before it, and while the window is full, their
// answer changes nothing.
//
// NextEmit is a query: it changes nothing.
func (c *Coordinator) NextEmit() (ticks int64, ok bool) {
	if c.err != nil {
		return 0, false
	}
	at, ok := c.emitAt()
	if !ok {
		return 0, false
	}
	return at - c.now, true
}

// emitAt returns the first tick after the current one at which the window
// has room and the emit interval and the retry backoff have passed, and
// false when the window is full. It ignores whether the spouts are ready.
func (c *Coordinator) emitAt() (int64, bool) {
	if c.active >= len(c.slots) {
		return 0, false
	}
	at := max(c.now+1, c.retryAt)
	if iv := c.interval(); iv > 0 && c.emitted {
		at = max(at, c.lastEmit+int64(iv))
	}
	return at, true
}

// interval returns the least number of ticks between two emissions now:
// EmitInterval, or IdleInterval while idle if that is longer.
func (c *Coordinator) interval() int {
	if c.idle {
		return max(c.cfg.EmitInterval, c.cfg.IdleInterval)
	}
	return c.cfg.EmitInterval
}

// SetIdle tells the coordinator whether the topology is idle: the shell
// saw the last processed batch carry no tuple from any source, and no
// source reports data waiting. While idle, batches are emitted at most
// every IdleInterval ticks instead of EmitInterval, so an idle topology
// does not commit an empty batch every EmitInterval; SetIdle(false)
// (data arrived) lets the next batch start as soon as EmitInterval
// allows, at once if it already passed. Failures and their backoff are
// not affected.
func (c *Coordinator) SetIdle(idle bool) {
	if c.err != nil || c.idle == idle {
		return
	}
	c.idle = idle
	c.sync()
	c.flush()
}

// SetSpoutReady tells the coordinator whether the spouts can start batches
// (Storm's isReady of every spout coordinator). While they cannot, no batch
// is emitted, not even the re-run of a failed one, but batches already
// emitted still commit: SetSpoutReady(false) drains the pipeline.
func (c *Coordinator) SetSpoutReady(ready bool) {
	if c.err != nil {
		return
	}
	c.paused = !ready
	c.sync()
	c.flush()
}

// sync starts the commit of the lowest uncommitted txid if it was processed,
// then emits batches into the free slots of the window.
func (c *Coordinator) sync() {
	if c.err != nil {
		return
	}
	if c.active > 0 {
		s := c.slot(c.committed + 1)
		if s.status == Processed {
			s.status = Committing
			s.deadline = c.now + int64(c.cfg.BatchTimeout)
			c.step = append(c.step, Action{Kind: Commit, Attempt: txn.Attempt{TxID: c.committed + 1, N: s.attempt}})
		}
	}
	for !c.paused && c.active < len(c.slots) && !c.throttled() && c.now >= c.retryAt {
		t := c.committed + txn.TxID(c.active) + 1
		s := c.slot(t)
		switch {
		case !s.used:
			s.used, s.attempt = true, 0
		case s.attempt == math.MaxUint32:
			c.err = &AttemptLimitError{Last: txn.Attempt{TxID: t, N: s.attempt}, Failures: s.failures}
			return
		default:
			s.attempt++
		}
		s.status = Processing
		s.deadline = c.now + int64(c.cfg.BatchTimeout)
		c.active++
		c.dirty = true
		c.lastEmit, c.emitted = c.now, true
		c.step = append(c.step, Action{Kind: EmitBatch, Attempt: txn.Attempt{TxID: t, N: s.attempt}})
	}
}

func (c *Coordinator) throttled() bool {
	iv := c.interval()
	return iv > 0 && c.emitted && c.now-c.lastEmit < int64(iv)
}

// flush queues the current input's announcements, preceded by a Persist of
// the durable state if it changed.
func (c *Coordinator) flush() {
	if c.dirty {
		c.actions = append(c.actions, Action{Kind: Persist, State: c.State()})
		c.dirty = false
	}
	c.actions = append(c.actions, c.step...)
	c.step = c.step[:0]
}

// failures returns the failure counts of the durable state: none without
// an attempt limit.
func (c *Coordinator) failures() []Failures {
	if c.cfg.MaxAttempts == 0 {
		return nil
	}
	var fs []Failures
	for i := 1; i <= len(c.slots); i++ {
		t := c.committed + txn.TxID(i)
		if s := c.slot(t); s.failures > 0 {
			fs = append(fs, Failures{TxID: t, N: uint32(s.failures)})
		}
	}
	k := len(fs)
	for t, s := range c.beyond {
		if s.failures > 0 {
			fs = append(fs, Failures{TxID: t, N: uint32(s.failures)})
		}
	}
	slices.SortFunc(fs[k:], func(a, b Failures) int { return cmp.Compare(a.TxID, b.TxID) })
	return fs
}

// HasReady reports whether there are actions for the shell.
func (c *Coordinator) HasReady() bool { return len(c.actions) > 0 }

// Ready returns the actions queued since the last Advance, in the order the
// shell must execute them (see the package comment). The slice is valid
// until the next Advance. Calling Ready again before Advance returns the
// same actions followed by any queued since.
func (c *Coordinator) Ready() []Action {
	c.handed = len(c.actions)
	return c.actions[:c.handed:c.handed]
}

// Advance tells the coordinator that the shell executed every action the
// last Ready returned.
func (c *Coordinator) Advance() {
	n := copy(c.actions, c.actions[c.handed:])
	clear(c.actions[n:])
	c.actions = c.actions[:n]
	c.handed = 0
}

// Err returns the error that halted the coordinator, or nil. A halted
// coordinator ignores every input and queues no more actions; the actions
// it queued before halting are consistent and may be executed or dropped.
func (c *Coordinator) Err() error { return c.err }

// Committed returns the last committed txid.
func (c *Coordinator) Committed() txn.TxID { return c.committed }

// Status returns the current attempt and status of txid t, or a zero
// Status if t is not active.
func (c *Coordinator) Status(t txn.TxID) (txn.Attempt, Status) {
	if t <= c.committed || t > c.committed+txn.TxID(c.active) {
		return txn.Attempt{}, 0
	}
	s := c.slot(t)
	return txn.Attempt{TxID: t, N: s.attempt}, s.status
}

// State returns the durable state: the last committed txid and the highest
// attempt number used for each later txid. It is what Persist actions
// carry and what New resumes from.
func (c *Coordinator) State() State {
	st := State{Committed: c.committed}
	n := 0
	for i := range c.slots {
		if c.slots[i].used {
			n++
		}
	}
	st.Failures = c.failures()
	for _, r := range c.beyond {
		if r.used {
			n++
		}
	}
	if n == 0 {
		return st
	}
	st.Attempts = make([]txn.Attempt, 0, n)
	for i := 1; i <= len(c.slots); i++ {
		t := c.committed + txn.TxID(i)
		if s := c.slot(t); s.used {
			st.Attempts = append(st.Attempts, txn.Attempt{TxID: t, N: s.attempt})
		}
	}
	k := len(st.Attempts)
	for t, r := range c.beyond {
		if r.used {
			st.Attempts = append(st.Attempts, txn.Attempt{TxID: t, N: r.attempt})
		}
	}
	slices.SortFunc(st.Attempts[k:], func(a, b txn.Attempt) int { return cmp.Compare(a.TxID, b.TxID) })
	return st
}
