package topology

import (
	"fmt"
	"sync"
	"time"

	"github.com/squallstream/squall/acker"
	"github.com/squallstream/squall/internal/clock"
)

// spoutTask is one task of a spout executor.
type spoutTask struct {
	id        TaskID
	index     int
	spout     Spout
	out       *SpoutCollector
	pending   pendingTable
	activator Activator // nil if the spout does not implement it
	waker     Waker     // nil if the spout does not implement it
	cnt       *counts   // the task's unpublished counters
}

// clockRounds is how many busy rounds may share one clock reading.
const clockRounds = 8

type spoutExecutor struct {
	*executor
	tasks  []*spoutTask
	in     chan []spoutMsg
	stash  [][]spoutMsg // outcomes received while blocked on a send
	clock  clock.Clock  // Config.Clock
	now    time.Time    // emit time of tracked tuples, refreshed every few rounds
	epoch  time.Time    // when the executor started; pending trees' times count from it
	age    int          // rounds since now was taken
	active bool
	max    int
	opened int

	// wake ends an idle wait: the channel of the task that is a Waker, or
	// with several, one their forwarders send on (spout_wake.go).
	// Cluster mode only: the spout's own timeout of its trees, a backstop
	// for an acker in a worker that died (or an outcome lost on the way).
	// Every sweep interval it fails the trees emitted, or last reset (the
	// acker forwards resets), at least two intervals ago.
	sweep     time.Duration
	nextSweep time.Time
	resets    map[RootID]time.Time

	// Cluster mode: the worker's peer losses, and the latest one this
	// executor acted on (failLost). Nil without acking.
	losses   *peerLosses
	seenLoss uint64

	wake      <-chan struct{}
	forwarded sync.WaitGroup
	quitWake  chan struct{} // closed by cleanup to stop the forwarders
}

func newSpoutExecutor(e *executor) *spoutExecutor {
	s := &spoutExecutor{executor: e, in: e.w.spoutIn[e.idx], clock: e.w.cfg.Clock, age: clockRounds}
	s.epoch = s.clock.Now()
	if e.acking {
		s.max = e.w.cfg.MaxSpoutPending
		if e.w.plan.cluster != nil && !e.w.cfg.DisableTimeouts {
			s.sweep, s.resets = e.w.cfg.MessageTimeout, make(map[RootID]time.Time)
		}
		// A loss recorded before this executor started took none of its
		// trees.
		s.losses, s.seenLoss = e.w.losses, e.w.losses.seq()
	}
	s.out.selfIn = s.in
	s.out.stash = &s.stash
	return s
}

func (s *spoutExecutor) run() {
	c := s.plan.comp
	for i, id := range s.plan.tasks {
		s.current = id
		sp := c.newSpout()
		if sp == nil {
			s.w.fatal(c.id, id, errNilInstance)
			return
		}
		t := &spoutTask{id: id, index: int(id - c.taskIDs[0]), spout: sp, cnt: s.taskCounts(id)}
		t.activator, _ = sp.(Activator)
		t.waker, _ = sp.(Waker)
		t.out = &SpoutCollector{e: s, task: t}
		s.tasks = append(s.tasks, t)
		info := TaskInfo{Component: c.id, Task: id, Index: t.index, NumTasks: c.tasks, topo: s.w.plan.topo}
		if err := sp.Open(s.w.ctx, info, t.out); err != nil {
			s.w.fatal(c.id, id, fmt.Errorf("open: %w", err))
			return
		}
		s.opened = i + 1
	}
	s.listenForWakes()
	idle := s.clock.NewTimer(s.w.cfg.SpoutIdleWait)
	defer idle.Stop()
	for !s.w.stopped() {
		s.drainInput()
		s.failLost()
		if s.sweep > 0 {
			s.expire()
		}
		s.syncActivation()
		if s.emitRound() {
			continue
		}
		s.flush()
		s.publishPending()
		s.confirmQuiet()
		turned := s.w.active.changed.Wait()
		if s.w.active.on.Load() != s.active {
			continue // turned since syncActivation
		}
		s.age = clockRounds
		idle.Reset(s.w.cfg.SpoutIdleWait)
		select {
		case b := <-s.in:
			s.handle(b)
		case <-turned:
		case <-idle.C():
		case _, ok := <-s.wake:
			if !ok {
				s.wake = nil // a closed channel wakes no more
			}
		case <-s.w.stopping:
			return
		}
	}
}

// emitRound calls NextTuple once on every task that may emit and reports
// whether any of them emitted.
func (s *spoutExecutor) emitRound() bool {
	if !s.active {
		return false
	}
	emitted := false
	if s.acking {
		// Reading the clock costs about as much as emitting a tuple, so a
		// busy spout reads it every clockRounds rounds; after an idle wait
		// it is always read afresh.
		if s.age++; s.age >= clockRounds {
			s.now, s.age = s.clock.Now(), 0
		}
	}
	for _, t := range s.tasks {
		s.current = t.id
		// Call NextTuple repeatedly while it emits, so a busy spout pays
		// the round's overhead (draining acks, checking activation and
		// stop) once per several tuples.
		for range callsPerRound {
			if s.max > 0 && t.pending.len() >= s.max {
				break
			}
			n := t.cnt.emitted
			t.spout.NextTuple()
			if t.cnt.emitted == n {
				break
			}
			emitted = true
		}
	}
	return emitted
}

// callsPerRound bounds the NextTuple calls per task in one round.
const callsPerRound = 16

func (s *spoutExecutor) drainInput() {
	for len(s.stash) > 0 {
		b := s.stash[0]
		s.stash = s.stash[1:]
		s.handle(b)
	}
	for {
		select {
		case b := <-s.in:
			s.handle(b)
		default:
			return
		}
	}
}

// handle delivers tree outcomes to the spout tasks that emitted them.
func (s *spoutExecutor) handle(batch []spoutMsg) {
	defer giveBack(s.w.spoutFree[s.idx], batch)
	first := s.plan.tasks[0]
	var now time.Time
	for _, m := range batch {
		t := s.tasks[m.task-first]
		if m.status == acker.Pending { // a reset, forwarded in cluster mode
			if s.resets != nil && t.pending.has(m.root) {
				s.resets[m.root] = s.clock.Now()
			}
			continue
		}
		p, ok := t.pending.take(m.root)
		if !ok {
			t.cnt.orphans++
			continue
		}
		if s.resets != nil {
			delete(s.resets, m.root)
		}
		s.current = t.id
		switch m.status {
		case acker.Completed:
			if now.IsZero() {
				now = s.clock.Now()
			}
			s.w.metrics.component(s.plan.comp.id).latency.Record(now.Sub(s.emittedAt(p)))
			t.cnt.acked++
			t.spout.Ack(p.msgID)
		case acker.TimedOut:
			t.cnt.timedOut++
			t.cnt.failed++
			t.spout.Fail(p.msgID)
		default:
			t.cnt.failed++
			t.spout.Fail(p.msgID)
		}
	}
}

// expire fails, as timed out, the trees pending for two sweep intervals
// since their emit or last reset; it runs once per interval.
func (s *spoutExecutor) expire() {
	now := s.clock.Now()
	if s.nextSweep.IsZero() {
		s.nextSweep = now.Add(s.sweep)
	}
	if now.Before(s.nextSweep) {
		return
	}
	s.nextSweep = now.Add(s.sweep)
	for _, t := range s.tasks {
		t.pending.removeIf(func(p *pendingTree) bool {
			last := s.emittedAt(*p)
			if r, ok := s.resets[p.root]; ok && r.After(last) {
				last = r
			}
			return now.Sub(last) >= 2*s.sweep
		}, func(p pendingTree) {
			delete(s.resets, p.root)
			s.current = t.id
			t.cnt.timedOut++
			t.cnt.failed++
			t.spout.Fail(p.msgID)
		})
	}
}

// syncActivation calls Activate or Deactivate when the requested state
// changed.
func (s *spoutExecutor) syncActivation() {
	want := s.w.active.on.Load()
	if want == s.active {
		return
	}
	s.active = want
	for _, t := range s.tasks {
		if t.activator == nil {
			continue
		}
		s.current = t.id
		if want {
			t.activator.Activate()
		} else {
			t.activator.Deactivate()
		}
	}
}

// emittedAt returns the time p was emitted.
func (s *spoutExecutor) emittedAt(p pendingTree) time.Time {
	return s.epoch.Add(time.Duration(p.emitted))
}

func (s *spoutExecutor) publishPending() {
	var n int
	for _, t := range s.tasks {
		n += t.pending.len()
	}
	s.setPending(int64(n))
}

// confirmQuiet tells Running.Stop, once the executor is idle and inactive
// with its pending count published, which Deactivate it has seen.
func (s *spoutExecutor) confirmQuiet() {
	if s.active {
		return
	}
	off := s.w.active.offs.Load()
	if s.w.quiet[s.idx].Swap(off) != off {
		s.w.drained.Broadcast()
	}
}

// setPending publishes the executor's pending count and wakes the waiters
// of Running.Stop when it drops to zero.
func (s *spoutExecutor) setPending(n int64) {
	if old := s.w.pending[s.idx].Swap(n); old != 0 && n == 0 {
		s.w.drained.Broadcast()
	}
}

func (s *spoutExecutor) cleanup() {
	s.stopWakes()
	s.flushQuietly()
	for _, t := range s.tasks[:s.opened] {
		s.current = t.id
		if s.active && t.activator != nil {
			_ = callQuietly(func() error { t.activator.Deactivate(); return nil })
		}
		if err := callQuietly(t.spout.Close); err != nil {
			s.w.log.Warn("closing spout", "component", s.plan.comp.id, "task", t.id, "err", err)
		}
	}
	s.setPending(0)
}

// callQuietly calls f, turning a panic into an error.
func callQuietly(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return f()
}
