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
	push(o, o.tuples, o.w.boltIn, o.w.boltFree, o.w.plan.taskExec[dst], t)
}

func (o *outbox) ack(dst TaskID, m ackerMsg) {
	push(o, o.acks, o.w.ackerIn, o.w.ackerFree, o.w.plan.taskExec[dst], m)
}

func (o *outbox) outcome(m spoutMsg) {
	push(o, o.outcomes, o.w.spoutIn, o.w.spoutFree, o.w.plan.taskExec[m.task], m)
}

// flush sends every partial buffer.
func (o *outbox) flush() {
	for len(o.dirty) > 0 {
		exec := o.dirty[len(o.dirty)-1]
		o.dirty = o.dirty[:len(o.dirty)-1]
		o.isDirty[exec] = false
		sendBuffer(o, o.tuples, o.w.boltIn, exec)
		sendBuffer(o, o.acks, o.w.ackerIn, exec)
		sendBuffer(o, o.outcomes, o.w.spoutIn, exec)
	}
}

// push buffers v for executor exec and sends the buffer once it is full.
// A new buffer is one given back on free[exec] if there is one (a remote
// executor's batch, emptied by its peer's sender), else a fresh one: the
// executor receiving a batch owns it.
func push[T any](o *outbox, bufs [][]T, queues []chan []T, free []chan []T, exec int, v T) {
	if bufs[exec] == nil {
		bufs[exec] = newBuffer(free, exec, o.batch)
	}
	bufs[exec] = append(bufs[exec], v)
	o.markDirty(exec)
	if len(bufs[exec]) >= o.batch {
		sendBuffer(o, bufs, queues, exec)
	}
}

// newBuffer returns an empty buffer of capacity n for executor exec.
func newBuffer[T any](free []chan []T, exec, n int) []T {
	if free != nil && free[exec] != nil {
		select {
		case b := <-free[exec]:
			return b[:0]
		default:
		}
	}
	return make([]T, 0, n)
}

// sendBuffer sends executor exec's buffer, if it holds anything, to its
// queue.
func sendBuffer[T any](o *outbox, bufs [][]T, queues []chan []T, exec int) {
	if b := bufs[exec]; len(b) > 0 {
		bufs[exec] = nil
		send(o, queues[exec], b)
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
