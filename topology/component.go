package topology

import (
	"context"
	"sync"
)

// Spout is a source of tuples. The runtime calls all of a task's methods
// from one goroutine, so an implementation needs no locking of its own.
type Spout interface {
	// Open is called once before anything else. ctx is cancelled when the
	// worker stops; goroutines the spout starts must stop then.
	Open(ctx context.Context, task TaskInfo, out *SpoutCollector) error
	// NextTuple emits zero or more tuples and returns promptly; it must
	// not block waiting for data.
	NextTuple()
	// Ack is called when the tree rooted at the tuple emitted with msgID
	// has been fully processed.
	Ack(msgID any)
	// Fail is called when that tree failed or timed out.
	Fail(msgID any)
	// Close is called when the worker stops.
	Close() error
}

// Activator is implemented by spouts that want to know when they are
// activated and deactivated. Deactivated spouts receive no NextTuple calls
// but still receive Ack and Fail. An active spout is deactivated before it
// is closed.
type Activator interface {
	Activate()
	Deactivate()
}

// Waker is implemented by spouts that learn of new work on their own:
// records arriving on a goroutine the spout started, or a deadline of a
// timer it set. After a round in which NextTuple emitted nothing, the
// executor waits up to Config.SpoutIdleWait before calling it again
// (sooner if an ack or fail arrives); a receive from a Waker's channel ends
// that wait at once. So a Waker can run with a long SpoutIdleWait, costing
// nothing while idle, and still emit as soon as it has something.
//
// Wake is called once, after Open returns, from the executor's goroutine;
// the executor then receives from the channel whenever it waits. Send on
// it from any goroutine, after the work is visible to NextTuple, without
// blocking: give the channel a buffer of one and drop the send when it is
// full (the wake-up already buffered covers it). A wake-up is a hint:
// NextTuple is called promptly, but only while the topology is active and
// the task is below MaxSpoutPending, and a wake-up that arrives while the
// executor is busy costs at most one extra round. Closing the channel
// stops the executor from waiting on it. Wakeup implements Waker.
type Waker interface {
	Wake() <-chan struct{}
}

// Wakeup is a ready-made Waker: embed it in a spout and call Notify when
// NextTuple has work. The zero Wakeup is ready to use; it must not be
// copied after first use.
type Wakeup struct {
	once sync.Once
	c    chan struct{}
}

func (w *Wakeup) ch() chan struct{} {
	w.once.Do(func() { w.c = make(chan struct{}, 1) })
	return w.c
}

// Wake implements Waker.
func (w *Wakeup) Wake() <-chan struct{} { return w.ch() }

// Notify wakes the executor waiting for the spout, or the next one to
// wait. It never blocks and is safe to call from any goroutine, any number
// of times: wake-ups not yet received merge into one.
func (w *Wakeup) Notify() {
	select {
	case w.ch() <- struct{}{}:
	default:
	}
}

// Bolt processes tuples. The runtime calls all of a task's methods from one
// goroutine. A Bolt must Ack or Fail every tuple it receives, now or later.
type Bolt interface {
	// Prepare is called once before Execute. ctx is cancelled when the
	// worker stops.
	Prepare(ctx context.Context, task TaskInfo, out *OutputCollector) error
	// Execute processes one tuple.
	Execute(t *Tuple)
	// Cleanup is called when the worker stops.
	Cleanup() error
}

// BasicBolt is a bolt whose input is acked for it: every emit is anchored to
// the input, and the input is acked when Execute returns nil. An error
// marked with failure.Retryable fails the input (so its spout replays it);
// one marked with failure.Reported also records the error for operators.
// Any other error, like a panic, stops the worker.
type BasicBolt interface {
	Execute(t *Tuple, out *BasicCollector) error
}

// BasicBoltFunc adapts a function to BasicBolt.
type BasicBoltFunc func(t *Tuple, out *BasicCollector) error

// Execute calls f.
func (f BasicBoltFunc) Execute(t *Tuple, out *BasicCollector) error { return f(t, out) }

// Preparer is implemented by a BasicBolt that needs setting up.
type Preparer interface {
	Prepare(ctx context.Context, task TaskInfo) error
}

// Cleaner is implemented by a BasicBolt that holds resources.
type Cleaner interface {
	Cleanup() error
}

// TaskInfo describes the task a spout or bolt instance runs as.
type TaskInfo struct {
	Component string // the component's id
	Task      TaskID // this task's id
	Index     int    // this task's index among the component's tasks
	NumTasks  int    // the component's number of tasks
	topo      *Topology
}

// Tasks returns the task ids of the named component, or nil if the topology
// has no such component. Bolts use it to find targets for EmitDirect.
func (i TaskInfo) Tasks(component string) []TaskID {
	if i.topo == nil {
		return nil
	}
	c := i.topo.component(component)
	if c == nil {
		return nil
	}
	return append([]TaskID(nil), c.taskIDs...)
}
