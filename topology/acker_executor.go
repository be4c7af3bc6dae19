package topology

import (
	"fmt"
	"time"

	"github.com/squallstream/squall/acker"
)

// ackerExecutor runs one acker task: it applies init, ack, fail and
// reset-timeout messages to a tracker and tells spout tasks the outcome of
// their trees. With timeouts enabled it rotates the tracker's timeout
// buckets once per message timeout on Config.Clock, so a tree times out
// between one and two timeouts after it was last (re)started.
type ackerExecutor struct {
	*executor
	in      chan []ackerMsg
	tracker *acker.Tracker

	forwardResets bool // send spouts a Pending outcome for every reset (cluster mode)
}

func newAckerExecutor(e *executor) *ackerExecutor {
	return &ackerExecutor{executor: e, in: e.w.ackerIn[e.idx], forwardResets: e.w.plan.cluster != nil}
}

func (a *ackerExecutor) run() {
	tr, err := acker.New(acker.Config{})
	if err != nil {
		panic(fmt.Sprintf("topology: creating acker: %v", err))
	}
	a.tracker = tr
	var tick <-chan time.Time
	if !a.w.cfg.DisableTimeouts {
		t := a.w.cfg.Clock.NewTicker(a.w.cfg.MessageTimeout)
		defer t.Stop()
		tick = t.C()
	}
	for {
		select {
		case batch := <-a.in:
			a.apply(batch)
			continue
		case <-tick:
			a.tick()
			continue
		case <-a.w.stopping:
			return
		default:
		}
		a.flush()
		select {
		case batch := <-a.in:
			a.apply(batch)
		case <-tick:
			a.tick()
		case <-a.w.stopping:
			return
		}
	}
}

func (a *ackerExecutor) apply(batch []ackerMsg) {
	defer giveBack(a.w.ackerFree[a.idx], batch)
	for _, m := range batch {
		var o acker.Outcome
		switch m.kind {
		case msgInit:
			o = a.tracker.Init(m.root, m.val, m.task)
		case msgAck:
			o = a.tracker.Ack(m.root, m.val)
		case msgFail:
			o = a.tracker.Fail(m.root)
		case msgReset:
			o = a.tracker.ResetTimeout(m.root)
		}
		switch o.Status {
		case acker.Completed:
			a.counts[0].acked++
		case acker.Failed:
			a.counts[0].failed++
		default:
			// Across workers the spout times its trees out too (in case
			// this acker's worker dies), so it is told of resets.
			if m.kind != msgReset || !a.forwardResets || o.SpoutTask == acker.NoTask {
				continue
			}
		}
		a.out.outcome(spoutMsg{task: o.SpoutTask, root: o.Root, status: o.Status})
	}
}

func (a *ackerExecutor) tick() {
	a.tracker.Tick(func(o acker.Outcome) {
		a.counts[0].timedOut++
		if o.SpoutTask == acker.NoTask {
			a.counts[0].orphans++
			return
		}
		a.out.outcome(spoutMsg{task: o.SpoutTask, root: o.Root, status: acker.TimedOut})
	})
}

func (a *ackerExecutor) cleanup() { a.flushQuietly() }
