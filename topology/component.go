package topology

import "context"

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
