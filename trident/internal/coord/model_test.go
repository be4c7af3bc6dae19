package coord

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/internal/backoff"
	"github.com/squallstream/squall/txn"
	"pgregory.net/rapid"
)

// model is a direct transcription of Storm's MasterBatchCoordinator
// (activeTx and attemptIds as maps, one loop over the window), with the
// changes this package documents: a stale fail is ignored, acks and fails
// name their phase, time is counted in ticks, failures per txid are limited
// (durably, outages aside, a crash counting as a failure), and re-runs back
// off. The property test checks that Coordinator's actions equal the
// model's after every input.
type model struct {
	cfg      Config
	max      int
	curr     txn.TxID // Storm's currTransaction: the next txid to commit
	active   map[txn.TxID]*mtx
	attempts map[txn.TxID]uint32 // Storm's attemptIds
	failures map[txn.TxID]int
	backoff  backoff.Backoff
	streak   int
	retryAt  int64
	now      int64
	lastEmit int64
	emitted  bool
	paused   bool
	halted   bool
	dirty    bool
	step     []Action
	out      []Action
}

type mtx struct {
	a        txn.Attempt
	status   Status
	deadline int64
}

func newModel(cfg Config, st State) *model {
	m := &model{
		cfg: cfg, max: cfg.window(), curr: st.Committed + 1,
		active:   map[txn.TxID]*mtx{},
		attempts: map[txn.TxID]uint32{},
		failures: map[txn.TxID]int{},
		backoff:  backoff.New(int64(cfg.RetryBackoff), int64(cfg.MaxRetryBackoff), cfg.Seed),
	}
	for _, f := range st.Failures {
		if f.TxID > st.Committed {
			m.failures[f.TxID] = max(m.failures[f.TxID], int(f.N))
		}
	}
	for _, a := range st.Attempts {
		if n, ok := m.attempts[a.TxID]; a.TxID > st.Committed && (!ok || a.N > n) {
			m.attempts[a.TxID] = a.N
		}
	}
	return m
}

func (m *model) find(a txn.Attempt, p Status) *mtx {
	tx := m.active[a.TxID]
	if m.halted || tx == nil || tx.a != a || tx.status != p || p == Processed {
		return nil
	}
	return tx
}

func (m *model) ack(a txn.Attempt, p Status) {
	tx := m.find(a, p)
	if tx == nil {
		return
	}
	if p == Processing {
		tx.status = Processed
	} else {
		delete(m.active, a.TxID)
		delete(m.attempts, a.TxID)
		delete(m.failures, a.TxID)
		m.streak = 0
		m.curr = a.TxID + 1
		m.dirty = true
		m.step = append(m.step, Action{Kind: Success, Attempt: a})
	}
	m.sync()
}

func (m *model) fail(a txn.Attempt, p Status, outage bool) {
	if m.find(a, p) == nil {
		return
	}
	m.doFail(a, outage)
	m.sync()
}

// count counts a failure of txid t and reports whether it halted.
func (m *model) count(t txn.TxID) bool {
	m.failures[t]++
	if m.cfg.MaxAttempts > 0 && m.failures[t] >= m.cfg.MaxAttempts {
		m.halted = true
		return true
	}
	m.dirty = m.dirty || m.cfg.MaxAttempts > 0
	return false
}

func (m *model) restarted(outage bool) {
	if m.halted || m.now > 0 || len(m.active) > 0 {
		return
	}
	if _, ok := m.attempts[m.curr]; ok && !outage {
		m.count(m.curr)
	}
	m.sync()
}

func (m *model) doFail(a txn.Attempt, outage bool) {
	if !outage && m.count(a.TxID) {
		return
	}
	m.streak++
	if d := m.backoff.Delay(m.streak); d > 0 {
		m.retryAt = m.now + d
	}
	for t := range m.active {
		if t >= a.TxID {
			delete(m.active, t)
		}
	}
}

func (m *model) tick() {
	if m.halted {
		return
	}
	m.now++
	if m.cfg.BatchTimeout > 0 {
		for t := m.curr; t < m.curr+txn.TxID(m.max); t++ {
			if tx := m.active[t]; tx != nil && tx.status != Processed && m.now >= tx.deadline {
				m.doFail(tx.a, false)
				break
			}
		}
	}
	m.sync()
}

func (m *model) setReady(ready bool) {
	if m.halted {
		return
	}
	m.paused = !ready
	m.sync()
}

func (m *model) sync() {
	if !m.halted {
		if tx := m.active[m.curr]; tx != nil && tx.status == Processed {
			tx.status = Committing
			tx.deadline = m.now + int64(m.cfg.BatchTimeout)
			m.step = append(m.step, Action{Kind: Commit, Attempt: tx.a})
		}
		for t := m.curr; t < m.curr+txn.TxID(m.max) && !m.paused && m.now >= m.retryAt; t++ {
			throttled := m.cfg.EmitInterval > 0 && m.emitted && m.now-m.lastEmit < int64(m.cfg.EmitInterval)
			if m.active[t] != nil || throttled {
				continue
			}
			n, ok := m.attempts[t]
			if ok {
				n++
			}
			m.attempts[t] = n
			a := txn.Attempt{TxID: t, N: n}
			m.active[t] = &mtx{a: a, status: Processing, deadline: m.now + int64(m.cfg.BatchTimeout)}
			m.lastEmit, m.emitted, m.dirty = m.now, true, true
			m.step = append(m.step, Action{Kind: EmitBatch, Attempt: a})
		}
	}
	if m.dirty {
		st := State{Committed: m.curr - 1}
		for t, n := range m.attempts {
			st.Attempts = append(st.Attempts, txn.Attempt{TxID: t, N: n})
		}
		slices.SortFunc(st.Attempts, func(a, b txn.Attempt) int { return cmp.Compare(a.TxID, b.TxID) })
		for t, n := range m.failures {
			if n > 0 && m.cfg.MaxAttempts > 0 {
				st.Failures = append(st.Failures, Failures{TxID: t, N: uint32(n)})
			}
		}
		slices.SortFunc(st.Failures, func(a, b Failures) int { return cmp.Compare(a.TxID, b.TxID) })
		m.out = append(m.out, Action{Kind: Persist, State: st})
		m.dirty = false
	}
	m.out = append(m.out, m.step...)
	m.step = m.step[:0]
}

// clone returns a copy of m that can be ticked without changing m, up to
// its first change (see checkNextTick).
func (m *model) clone() *model {
	c := *m
	c.active = make(map[txn.TxID]*mtx, len(m.active))
	for t, tx := range m.active {
		cp := *tx
		c.active[t] = &cp
	}
	c.attempts, c.failures = maps.Clone(m.attempts), maps.Clone(m.failures)
	c.step, c.out = nil, nil
	// Without jitter: the copy must not draw from m's source. The copy
	// is only ticked up to the first change, so its delays do not matter.
	c.backoff = backoff.Exponential(m.backoff.Base, m.backoff.Max)
	return &c
}

// phases describes the active txids and whether m halted: what a tick
// changes besides counting, when it queues no action.
func (m *model) phases() string {
	return fmt.Sprint(m.halted, m.active)
}

// checkNextTick checks Coordinator.NextTick against a copy of the model
// driven by ticks alone: the ticks before the one NextTick names queue no
// action and change no phase, and that one does. If NextTick says no tick
// can change anything, none of the next nextTickHorizon ticks does.
func checkNextTick(t *rapid.T, c *Coordinator, m *model) {
	k, ok := c.NextTick()
	if ok && k < 1 {
		t.Fatalf("NextTick = %d", k)
	}
	limit := k
	if !ok {
		limit = nextTickHorizon
	}
	mc := m.clone()
	for i := int64(1); i <= limit; i++ {
		before := mc.phases()
		mc.tick()
		changed := len(mc.take()) > 0 || mc.phases() != before
		if want := ok && i == k; changed != want {
			t.Fatalf("NextTick = %d, %v; but tick %d changes the model: %v", k, ok, i, changed)
		}
	}
}

// checkNextEmit checks Coordinator.NextEmit against copies of the model
// whose spouts turn ready after i ticks (the ticks as they are, then
// SetSpoutReady(true)): none of them emits a batch for i before the tick
// NextEmit names (except now, when that tick is the next one), and the
// copy made ready at that tick does. Only the ticks before the first one
// that can change the model on its own (NextTick) are tried: a timeout
// there frees room or starts a backoff. If NextEmit says the window is
// full, no copy emits up to nextTickHorizon ticks.
func checkNextEmit(t *rapid.T, c *Coordinator, m *model) {
	k, ok := c.NextEmit()
	if ok && k < 1 {
		t.Fatalf("NextEmit = %d", k)
	}
	limit := k
	if !ok {
		limit = nextTickHorizon
	}
	if tk, tok := c.NextTick(); tok && tk <= limit && m.cfg.BatchTimeout > 0 {
		limit = tk - 1 // tick tk may be a timeout; the ones before it change nothing (checkNextTick)
	}
	for i := int64(0); i <= limit; i++ {
		if i == 0 && ok && k == 1 {
			continue // emitting now or at the next tick both fit k == 1
		}
		mc := m.clone()
		for range i {
			mc.tick()
		}
		mc.setReady(true)
		emitted := slices.ContainsFunc(mc.take(), func(a Action) bool { return a.Kind == EmitBatch })
		if want := ok && i == k; emitted != want {
			t.Fatalf("NextEmit = %d, %v; but spouts ready after %d ticks emit a batch: %v", k, ok, i, emitted)
		}
	}
}

// nextTickHorizon exceeds every wait TestModel can draw: emit interval,
// timeout and backoff.
const nextTickHorizon = 64

func (m *model) take() []Action {
	out := m.out
	m.out = nil
	return out
}

// shell executes a coordinator's actions like a real shell and checks the
// invariants every execution must satisfy, whatever the inputs:
//
//   - commits and successes go strictly in txid order, one at a time;
//   - a commit names the current attempt of the next txid, whose
//     processing was acknowledged;
//   - at most MaxBatchesInFlight txids after the last success are emitted;
//   - a Persist covering an attempt precedes its emission, and one covering
//     a committed txid precedes its success;
//   - no (txid, attempt) is ever emitted twice, across restarts too.
type shell struct {
	t         *rapid.T
	window    int
	persisted State
	success   txn.TxID // the last txid announced with Success
	ever      map[txn.Attempt]bool
	processed map[txn.Attempt]bool // processing acked after emission
	committed map[txn.Attempt]bool // commit acked after the Commit action
	current   map[txn.TxID]txn.Attempt
	commit    *txn.Attempt // outstanding commit
}

func newShell(t *rapid.T, window int) *shell {
	return &shell{t: t, window: window, ever: map[txn.Attempt]bool{}, processed: map[txn.Attempt]bool{},
		committed: map[txn.Attempt]bool{}, current: map[txn.TxID]txn.Attempt{}}
}

func (s *shell) persistedAttempt(t txn.TxID) (uint32, bool) {
	for _, a := range s.persisted.Attempts {
		if a.TxID == t {
			return a.N, true
		}
	}
	return 0, false
}

func (s *shell) exec(a Action) {
	t := s.t
	switch a.Kind {
	case Persist:
		if a.State.Committed < s.persisted.Committed {
			t.Fatalf("persist went back from committed=%d: %v", s.persisted.Committed, a)
		}
		for _, old := range s.persisted.Attempts {
			for _, n := range a.State.Attempts {
				if n.TxID == old.TxID && n.N < old.N {
					t.Fatalf("persist lowered attempt %v to %v", old, n)
				}
			}
		}
		s.persisted = a.State
	case EmitBatch:
		if s.ever[a.Attempt] {
			t.Fatalf("attempt %v emitted twice", a.Attempt)
		}
		if n, ok := s.persistedAttempt(a.Attempt.TxID); !ok || n < a.Attempt.N {
			t.Fatalf("emit %v before a persist covering it (persisted %v)", a.Attempt, s.persisted)
		}
		if a.Attempt.TxID <= s.success || a.Attempt.TxID > s.success+txn.TxID(s.window) {
			t.Fatalf("emit %v outside the window after success %d", a.Attempt, s.success)
		}
		if s.commit != nil && s.commit.TxID == a.Attempt.TxID {
			s.commit = nil // the commit failed; the batch runs again
		}
		s.ever[a.Attempt] = true
		s.current[a.Attempt.TxID] = a.Attempt
	case Commit:
		if a.Attempt.TxID != s.success+1 {
			t.Fatalf("commit %v after success %d", a.Attempt, s.success)
		}
		if s.current[a.Attempt.TxID] != a.Attempt || !s.processed[a.Attempt] {
			t.Fatalf("commit %v: not the current processed attempt", a.Attempt)
		}
		if s.commit != nil {
			t.Fatalf("commit %v while %v is committing", a.Attempt, *s.commit)
		}
		at := a.Attempt
		s.commit = &at
	case Success:
		if s.commit == nil || *s.commit != a.Attempt || !s.committed[a.Attempt] {
			t.Fatalf("success %v without its acknowledged commit", a.Attempt)
		}
		if a.Attempt.TxID != s.success+1 || s.persisted.Committed < a.Attempt.TxID {
			t.Fatalf("success %v after success %d, persisted %v", a.Attempt, s.success, s.persisted)
		}
		s.success, s.commit = a.Attempt.TxID, nil
	}
}

func (s *shell) noteAck(a txn.Attempt, p Status) {
	if !s.ever[a] {
		return
	}
	if p == Processing {
		s.processed[a] = true
	} else if s.commit != nil && *s.commit == a {
		s.committed[a] = true
	}
}

func (s *shell) restart() {
	s.success = max(s.success, s.persisted.Committed)
	s.commit = nil
	clear(s.current)
}

func TestModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := Config{
			MaxBatchesInFlight: rapid.IntRange(0, 5).Draw(t, "max"),
			EmitInterval:       rapid.IntRange(0, 3).Draw(t, "interval"),
			BatchTimeout:       rapid.IntRange(0, 8).Draw(t, "timeout"),
			MaxAttempts:        rapid.IntRange(0, 8).Draw(t, "attempts"),
			RetryBackoff:       rapid.IntRange(0, 3).Draw(t, "backoff"),
			Seed:               rapid.Uint64().Draw(t, "seed"),
		}
		if cfg.RetryBackoff > 0 {
			cfg.MaxRetryBackoff = rapid.IntRange(cfg.RetryBackoff, 12).Draw(t, "maxBackoff")
		}
		c, err := New(cfg, State{})
		if err != nil {
			t.Fatal(err)
		}
		m := newModel(cfg, State{})
		sh := newShell(t, cfg.window())

		// run applies one input to both and executes the first n actions
		// (all when n < 0) before comparing.
		run := func(name string, n int, in func(c *Coordinator), min func(m *model)) {
			in(c)
			min(m)
			got, want := c.Ready(), m.take()
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%s:\n got %v\nwant %v", name, got, want)
			}
			if (c.Err() != nil) != m.halted {
				t.Fatalf("%s: halted %v, model halted %v", name, c.Err(), m.halted)
			}
			if n < 0 || n > len(got) {
				n = len(got)
			}
			for _, a := range got[:n] {
				sh.exec(a)
			}
			c.Advance()
		}
		pick := func(t *rapid.T) (txn.Attempt, Status) {
			var cands []txn.Attempt
			for tx := c.Committed() + 1; ; tx++ {
				a, s := c.Status(tx)
				if s == 0 {
					break
				}
				cands = append(cands, a)
			}
			var a txn.Attempt
			switch k := rapid.IntRange(0, 9).Draw(t, "kind"); {
			case k < 7 && len(cands) > 0:
				a = rapid.SampledFrom(cands).Draw(t, "current")
			case k < 9 && len(sh.ever) > 0:
				all := make([]txn.Attempt, 0, len(sh.ever))
				for a := range sh.ever {
					all = append(all, a)
				}
				slices.SortFunc(all, func(x, y txn.Attempt) int {
					return cmp.Or(cmp.Compare(x.TxID, y.TxID), cmp.Compare(x.N, y.N))
				})
				a = rapid.SampledFrom(all).Draw(t, "emitted")
			default:
				a = txn.Attempt{
					TxID: txn.TxID(rapid.IntRange(1, 12).Draw(t, "txid")),
					N:    uint32(rapid.IntRange(0, 6).Draw(t, "n")),
				}
			}
			p := Processing
			if _, s := c.Status(a.TxID); s == Committing {
				p = Committing
			}
			if rapid.IntRange(0, 9).Draw(t, "wrongPhase") == 0 {
				p = rapid.SampledFrom([]Status{0, Processing, Processed, Committing}).Draw(t, "phase")
			}
			return a, p
		}
		reason, outage := errors.New("injected"), failure.Unavailable(errors.New("injected outage"))
		input := func(t *rapid.T, n int) {
			switch rapid.IntRange(0, 10).Draw(t, "input") {
			case 0, 1:
				run("tick", n, func(c *Coordinator) { c.Tick() }, (*model).tick)
			case 10:
				// Several ticks in one go, as a shell that slept through
				// them delivers them.
				k := rapid.Int64Range(1, 30).Draw(t, "ticks")
				run(fmt.Sprintf("elapse %d", k), n, func(c *Coordinator) { c.Elapse(k) }, func(m *model) {
					for range k {
						m.tick()
					}
				})
			case 2:
				r := rapid.Bool().Draw(t, "ready")
				run("ready", n, func(c *Coordinator) { c.SetSpoutReady(r) }, func(m *model) { m.setReady(r) })
			case 3:
				a, p := pick(t)
				o := rapid.IntRange(0, 3).Draw(t, "outage") == 0
				why := reason
				if o {
					why = outage
				}
				run("fail "+a.String(), n, func(c *Coordinator) { c.Fail(a, p, why) }, func(m *model) { m.fail(a, p, o) })
			default:
				a, p := pick(t)
				sh.noteAck(a, p)
				run("ack "+a.String(), n, func(c *Coordinator) { c.Ack(a, p) }, func(m *model) { m.ack(a, p) })
			}
		}
		restart := func() {
			sh.restart()
			var err error
			if c, err = New(cfg, sh.persisted); err != nil {
				t.Fatal(err)
			}
			m = newModel(cfg, sh.persisted)
		}

		t.Repeat(map[string]func(*rapid.T){
			"input": func(t *rapid.T) { input(t, -1) },
			"crash": func(t *rapid.T) {
				// An input whose actions are cut short by a crash, then a
				// restart from the persisted state.
				input(t, rapid.IntRange(0, 3).Draw(t, "executed"))
				restart()
				if rapid.Bool().Draw(t, "crashed") {
					o := rapid.IntRange(0, 3).Draw(t, "outage") == 0
					why := ErrRestarted
					if o {
						why = outage
					}
					run("restarted", -1, func(c *Coordinator) { c.Restarted(why) }, func(m *model) { m.restarted(o) })
				}
			},
			"": func(t *rapid.T) {
				checkNextTick(t, c, m)
				checkNextEmit(t, c, m)
				processing := 0
				for tx := c.Committed() + 1; ; tx++ {
					_, s := c.Status(tx)
					if s == 0 {
						break
					}
					if s == Processing {
						processing++
					}
				}
				if processing > cfg.window() {
					t.Fatalf("%d batches processing, max %d", processing, cfg.window())
				}
			},
		})

		// Liveness: once every batch succeeds, the stream makes progress.
		if c.Err() != nil {
			return
		}
		run("ready", -1, func(c *Coordinator) { c.SetSpoutReady(true) }, func(m *model) { m.setReady(true) })
		goal := sh.success + 5
		for i := 0; sh.success < goal; i++ {
			if i > 200 {
				t.Fatalf("no progress: success %d, goal %d", sh.success, goal)
			}
			a, s := c.Status(c.Committed() + 1)
			switch s {
			case Processing, Committing:
				sh.noteAck(a, s)
				run("drain ack", -1, func(c *Coordinator) { c.Ack(a, s) }, func(m *model) { m.ack(a, s) })
			default:
				run("drain tick", -1, func(c *Coordinator) { c.Tick() }, (*model).tick)
			}
		}
	})
}
