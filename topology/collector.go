package topology

import (
	"context"
	"errors"
	"runtime"

	"github.com/squallstream/squall/failure"
)

// SpoutCollector emits a spout task's tuples. It may only be used from the
// spout's own methods (the executor's goroutine).
type SpoutCollector struct {
	e    *spoutExecutor
	task *spoutTask
}

// Emit emits v on the default stream. A non-nil msgID makes the tuple the
// root of a tracked tree: the spout later receives Ack(msgID) or
// Fail(msgID). With a nil msgID the tuple is not tracked.
func (c *SpoutCollector) Emit(msgID any, v Values) {
	c.emit(DefaultStream, NoTask, msgID, v)
}

// EmitStream emits v on the named stream.
func (c *SpoutCollector) EmitStream(stream string, msgID any, v Values) {
	c.emit(stream, NoTask, msgID, v)
}

// EmitDirect emits v on a direct stream to one task.
func (c *SpoutCollector) EmitDirect(task TaskID, stream string, msgID any, v Values) {
	c.emit(stream, directTask(task), msgID, v)
}

// Pending returns the number of this task's trees not yet acked or failed.
func (c *SpoutCollector) Pending() int { return c.task.pending.len() }

// ReportError records err for operators (Running.Errors).
func (c *SpoutCollector) ReportError(err error) { c.e.reportError(c.task.id, err) }

func (c *SpoutCollector) emit(stream string, direct TaskID, msgID any, v Values) {
	s, t := c.e, c.task
	r := s.lookupRoute(stream, v, direct != NoTask)
	targets := s.targets(r, t.id, v, direct)
	tracked := msgID != nil && s.acking
	var root RootID
	if tracked {
		root = s.newRoot(t)
	}
	var xor uint64
	for _, dst := range targets {
		tu := Tuple{values: v, schema: r.schema, srcTask: t.id, dstTask: dst}
		if tracked {
			id := s.edgeID()
			xor ^= id
			tu.ids.xor(root, id)
		}
		s.out.tuple(dst, tu)
	}
	t.cnt.emitted++
	t.cnt.transferred += uint64(len(targets))
	switch {
	case tracked:
		now := s.now
		if now.IsZero() {
			now = s.clock.Now()
		}
		t.pending.add(pendingTree{root: root, msgID: msgID, emitted: int64(now.Sub(s.epoch))})
		s.out.ack(s.w.plan.ackerFor(root), ackerMsg{kind: msgInit, task: t.id, root: root, val: xor})
	case msgID != nil:
		// Tracking is off: the message counts as processed once emitted.
		t.cnt.acked++
		t.spout.Ack(msgID)
	}
}

// directTask checks the task of an EmitDirect: NoTask would mean "not
// direct" to emit, so it is refused here with a clear message.
func directTask(task TaskID) TaskID {
	if task == NoTask {
		panic("topology: EmitDirect to NoTask; pass the id of a subscribing task")
	}
	return task
}

// newRoot returns a random root id that the task is not already tracking.
func (s *spoutExecutor) newRoot(t *spoutTask) RootID {
	for {
		r := RootID(s.edgeID())
		if !t.pending.has(r) {
			return r
		}
	}
}

func (e *executor) reportError(task TaskID, err error) {
	if err == nil {
		return
	}
	e.taskCounts(task).errors++
	name := e.plan.name()
	e.w.errors.add(ReportedError{Component: name, Task: task, Time: e.w.cfg.Clock.Now(), Err: err})
	e.w.log.Warn("error reported", "component", name, "task", task, "err", err)
}

// OutputCollector emits a bolt task's tuples and acks or fails its inputs.
// It may only be used from the bolt's own methods (the executor's
// goroutine).
type OutputCollector struct {
	e    *executor
	task TaskID
	cnt  *counts // the task's unpublished counters
}

// Emit emits v on the default stream, anchored to the given tuples: the new
// tuple joins every tree its anchors belong to. With no anchors it is not
// tracked. It returns the tasks the tuple was sent to, in a slice that is
// valid until the executor's next emit.
func (c *OutputCollector) Emit(v Values, anchors ...*Tuple) []TaskID {
	return c.emit(DefaultStream, NoTask, v, anchors)
}

// EmitStream emits v on the named stream, anchored to the given tuples, and
// returns the tasks it was sent to like Emit.
func (c *OutputCollector) EmitStream(stream string, v Values, anchors ...*Tuple) []TaskID {
	return c.emit(stream, NoTask, v, anchors)
}

// EmitDirect emits v on a direct stream to one task, anchored to the given
// tuples.
func (c *OutputCollector) EmitDirect(task TaskID, stream string, v Values, anchors ...*Tuple) {
	_ = c.emit(stream, directTask(task), v, anchors)
}

func (c *OutputCollector) emit(stream string, direct TaskID, v Values, anchors []*Tuple) []TaskID {
	e := c.e
	r := e.lookupRoute(stream, v, direct != NoTask)
	targets := e.targets(r, c.task, v, direct)
	for _, dst := range targets {
		tu := Tuple{values: v, schema: r.schema, srcTask: c.task, dstTask: dst}
		if e.acking {
			for _, a := range anchors {
				if a.ids.len() == 0 {
					continue
				}
				id := e.edgeID()
				a.outAck ^= id
				for i := range a.ids.len() {
					tu.ids.xor(a.ids.at(i).root, id)
				}
			}
		}
		e.out.tuple(dst, tu)
	}
	c.cnt.emitted++
	c.cnt.transferred += uint64(len(targets))
	return targets
}

// errAckedTwice is reported when a tuple is acked or failed more than once.
var errAckedTwice = errors.New("topology: tuple acked or failed more than once; ignored")

// Ack marks t as processed. Every tuple must be acked or failed exactly once.
func (c *OutputCollector) Ack(t *Tuple) {
	if !c.finish(t) {
		return
	}
	c.cnt.acked++
	if !c.e.acking {
		return
	}
	for i := range t.ids.len() {
		re := t.ids.at(i)
		c.e.out.ack(c.e.w.plan.ackerFor(re.root), ackerMsg{kind: msgAck, root: re.root, val: re.id ^ t.outAck})
	}
}

// Fail fails every tree t belongs to; their spouts receive Fail.
func (c *OutputCollector) Fail(t *Tuple) {
	if !c.finish(t) {
		return
	}
	c.cnt.failed++
	c.send(t, msgFail)
}

// ResetTimeout restarts the timeout of every tree t belongs to, for work
// that legitimately takes longer than the message timeout.
func (c *OutputCollector) ResetTimeout(t *Tuple) { c.send(t, msgReset) }

// ReportError records err for operators (Running.Errors).
func (c *OutputCollector) ReportError(err error) { c.e.reportError(c.task, err) }

func (c *OutputCollector) finish(t *Tuple) bool {
	if t.done {
		c.ReportError(errAckedTwice)
		return false
	}
	t.done = true
	return true
}

func (c *OutputCollector) send(t *Tuple, kind ackerMsgKind) {
	if !c.e.acking {
		return
	}
	for i := range t.ids.len() {
		root := t.ids.at(i).root
		c.e.out.ack(c.e.w.plan.ackerFor(root), ackerMsg{kind: kind, root: root})
	}
}

// BasicCollector emits a BasicBolt's tuples, each anchored to the input
// being executed.
type BasicCollector struct {
	out   *OutputCollector
	input *Tuple
}

// Emit emits v on the default stream, anchored to the input, and returns
// the tasks it was sent to like OutputCollector.Emit.
func (c *BasicCollector) Emit(v Values) []TaskID { return c.out.Emit(v, c.input) }

// EmitStream emits v on the named stream, anchored to the input, and
// returns the tasks it was sent to.
func (c *BasicCollector) EmitStream(stream string, v Values) []TaskID {
	return c.out.EmitStream(stream, v, c.input)
}

// EmitDirect emits v on a direct stream to one task, anchored to the input.
func (c *BasicCollector) EmitDirect(task TaskID, stream string, v Values) {
	c.out.EmitDirect(task, stream, v, c.input)
}

// ReportError records err for operators without failing the input.
func (c *BasicCollector) ReportError(err error) { c.out.ReportError(err) }

// basicBoltAdapter runs a BasicBolt as a Bolt.
type basicBoltAdapter struct {
	bolt      BasicBolt
	out       *OutputCollector
	component string
	collector BasicCollector
}

func (a *basicBoltAdapter) Prepare(ctx context.Context, task TaskInfo, out *OutputCollector) error {
	a.out, a.component = out, task.Component
	a.collector.out = out
	if p, ok := a.bolt.(Preparer); ok {
		return p.Prepare(ctx, task)
	}
	return nil
}

func (a *basicBoltAdapter) Execute(t *Tuple) {
	a.collector.input = t
	err := a.bolt.Execute(t, &a.collector)
	a.collector.input = nil
	switch {
	case err == nil:
		a.out.Ack(t)
	case failure.IsRetryable(err):
		if failure.IsReported(err) {
			a.out.ReportError(err)
		}
		a.out.Fail(t)
	default:
		// Any other error is fatal, like a panic: stop the worker and
		// end this executor, running its deferred cleanup.
		a.out.e.w.fatal(a.component, a.out.task, err)
		runtime.Goexit()
	}
}

func (a *basicBoltAdapter) Cleanup() error {
	if c, ok := a.bolt.(Cleaner); ok {
		return c.Cleanup()
	}
	return nil
}
