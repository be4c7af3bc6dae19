package topology

import (
	"runtime"

	"github.com/squallstream/squall/acker"
)

// ackerMsg is a message from a spout or bolt to an acker task.
type ackerMsg struct {
	kind ackerMsgKind
	task TaskID // the spout task, for init
	root RootID
	val  uint64
}

type ackerMsgKind uint8

const (
	msgInit ackerMsgKind = iota
	msgAck
	msgFail
	msgReset
)

// spoutMsg tells a spout task the outcome of one of its trees.
type spoutMsg struct {
	task   TaskID
	root   RootID
	status acker.Status
}

// outbox buffers an executor's output per destination executor and sends
// a buffer as one batch when it is full or when flush is called.
//
// Sends block while the destination queue is full. A blocked spout keeps
// draining its own input queue into its stash, so that ackers blocked on
// the spout make progress and the spout -> bolt -> acker -> spout loop
// cannot deadlock. When the worker stops, a blocked send ends the calling
// goroutine with runtime.Goexit, which runs its deferred cleanup.
type outbox struct {
	w        *worker
	batch    int
	tuples   [][]Tuple
	acks     [][]ackerMsg
	outcomes [][]spoutMsg
	dirty    []int
	isDirty  []bool

	// Set for spout executors only.
	selfIn <-chan []spoutMsg
	stash  *[][]spoutMsg
}

func newOutbox(w *worker) outbox {
	n := len(w.plan.execs)
	return outbox{w: w, batch: w.cfg.BatchSize,
		tuples: make([][]Tuple, n), acks: make([][]ackerMsg, n),
		outcomes: make([][]spoutMsg, n), isDirty: make([]bool, n)}
}

func (o *outbox) markDirty(exec int) {
	if !o.isDirty[exec] {
		o.isDirty[exec] = true
		o.dirty = append(o.dirty, exec)
	}
}

func (o *outbox) tuple(dst TaskID, t Tuple) {
	exec := o.w.plan.taskExec[dst]
	if o.tuples[exec] == nil {
		o.tuples[exec] = make([]Tuple, 0, o.batch)
	}
	o.tuples[exec] = append(o.tuples[exec], t)
	o.markDirty(exec)
	if len(o.tuples[exec]) >= o.batch {
		o.sendTuples(exec)
	}
}

func (o *outbox) ack(dst TaskID, m ackerMsg) {
	exec := o.w.plan.taskExec[dst]
	if o.acks[exec] == nil {
		o.acks[exec] = make([]ackerMsg, 0, o.batch)
	}
	o.acks[exec] = append(o.acks[exec], m)
	o.markDirty(exec)
	if len(o.acks[exec]) >= o.batch {
		o.sendAcks(exec)
	}
}

func (o *outbox) outcome(m spoutMsg) {
	exec := o.w.plan.taskExec[m.task]
	if o.outcomes[exec] == nil {
		o.outcomes[exec] = make([]spoutMsg, 0, o.batch)
	}
	o.outcomes[exec] = append(o.outcomes[exec], m)
	o.markDirty(exec)
	if len(o.outcomes[exec]) >= o.batch {
		o.sendOutcomes(exec)
	}
}

// flush sends every partial buffer.
func (o *outbox) flush() {
	for len(o.dirty) > 0 {
		exec := o.dirty[len(o.dirty)-1]
		o.dirty = o.dirty[:len(o.dirty)-1]
		o.isDirty[exec] = false
		o.sendTuples(exec)
		o.sendAcks(exec)
		o.sendOutcomes(exec)
	}
}

func (o *outbox) sendTuples(exec int) {
	if b := o.tuples[exec]; len(b) > 0 {
		o.tuples[exec] = nil
		send(o, o.w.boltIn[exec], b)
	}
}

func (o *outbox) sendAcks(exec int) {
	if b := o.acks[exec]; len(b) > 0 {
		o.acks[exec] = nil
		send(o, o.w.ackerIn[exec], b)
	}
}

func (o *outbox) sendOutcomes(exec int) {
	if b := o.outcomes[exec]; len(b) > 0 {
		o.outcomes[exec] = nil
		send(o, o.w.spoutIn[exec], b)
	}
}

func send[T any](o *outbox, ch chan []T, batch []T) {
	select {
	case ch <- batch:
		return
	default:
	}
	for {
		select {
		case ch <- batch:
			return
		case in := <-o.selfIn:
			*o.stash = append(*o.stash, in)
		case <-o.w.stopping:
			runtime.Goexit()
		}
	}
}
