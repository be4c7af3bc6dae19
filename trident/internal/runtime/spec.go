package runtime

import (
	"context"
	"log/slog"
	"time"

	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/transport"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/internal/plan"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// Spec is a planned topology with what the runtime needs to run it.
type Spec struct {
	Name    string     // the topology's name: the coordinator's state id
	Plan    *plan.Plan // its stages
	Sources []Source   // by source index (plan.Stage.SourceIndex)

	// NewProcessor returns a processor for one task of stage s; it is
	// called again for every task a worker (re)starts.
	NewProcessor func(s *plan.Stage) Processor

	// ValueTypes, if not nil, registers the types of the values the
	// stages emit beyond the transport's built-in set and the runtime's
	// own (extension ids from MinUserExtID), for cluster mode.
	ValueTypes func(*transport.Types) error
}

// MinUserExtID is the smallest transport extension id left to the
// topology's own value types (Spec.ValueTypes): smaller ones are the
// runtime's.
const MinUserExtID = transport.MinExtID + 16

// Source is a stream's source, as the runtime opens it.
type Source struct {
	ID string // the stream's state id

	// NewAllocator returns the stream's spout allocator; the master
	// opens one per worker start and closes it when the worker stops.
	NewAllocator func(store coordstore.Store, owner coordstore.Fence, stream string) (*spout.Allocator, error)

	// NewExecutor returns the executor of one spout task.
	NewExecutor func(store coordstore.Store, owner coordstore.Fence, stream string, task, numTasks int) (spout.Executor, error)

	// Waiting, if not nil, reports cheaply whether data waits for a
	// batch (a DRPC request): the master asks it at every tick while the
	// topology is idle, and starts a batch at once when it says so.
	Waiting func() bool
}

// Config is what the runtime needs of the API's configuration, with every
// default filled in.
type Config struct {
	Topology           topology.Config  // Logger, Clock and Seed are read
	Store              coordstore.Store // required
	MaxBatchesInFlight int
	BatchEmitInterval  time.Duration // required: more than 0
	IdleBatchInterval  time.Duration // while idle; none if not above BatchEmitInterval
	MaxAttempts        int
	CorruptAttempts    int           // with MaxAttempts zero, failures on a corrupt stored value that halt; required
	RetryBackoff       time.Duration // required: more than 0
	MaxRetryBackoff    time.Duration // required: at least RetryBackoff
}

// logger returns the configured logger, or one that discards.
func (c *Config) logger() *slog.Logger {
	if c.Topology.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Topology.Logger
}

// Processor runs the operations of one stage in one task. The stage bolt
// calls it from its goroutine only, in this order for every batch attempt
// it processes: Begin once, then Source (a source stage, for every tuple
// the source emits) or Execute (for every tuple that arrives), then
// Finish once the batch is complete (for a committer: in its commit
// phase). An attempt can be dropped at any point, without Finish.
//
// An error returned by Source, Execute or Finish fails the batch; whether
// it is replayed or crashes the worker is the runtime's decision (package
// failure). A processor emits through the Batch it is given.
type Processor interface {
	// Open prepares the task: it opens the stage's state. ctx is fenced
	// with the owner generation (state.WithFence) and lives as long as the
	// task.
	Open(ctx context.Context, t *Task) error
	// Begin returns the processor's data for attempt a, kept in
	// Batch.Data until the attempt is dropped.
	Begin(a txn.Attempt) any
	// Source runs a tuple the stage's source emitted.
	Source(bt *Batch, values []any) error
	// Execute runs a tuple that arrived on input in (values without the
	// batch field).
	Execute(bt *Batch, in plan.Input, values []any) error
	// Finish ends the batch: aggregations complete, joins and queries
	// run, committers write state with the batch's txid. The runtime
	// then reports the batch downstream.
	Finish(bt *Batch) error
}

// Task is a stage task, as its Processor sees it.
type Task struct {
	Topology string
	Stage    *plan.Stage
	ID       topology.TaskID
	Index    int // among the stage's tasks
	NumTasks int
	Log      *slog.Logger
	Status   *Status

	out output
}

// ReportError shows err to operators (Running.Errors).
func (t *Task) ReportError(err error) { t.out.ReportError(err) }

// Halt stops the topology for good because a write of this task was
// fenced by a newer owner (err matches state.ErrFenced).
func (t *Task) Halt(err error) {
	t.Status.AddFencingRejection()
	t.Status.Halt(Superseded(t.Status.Owner(), err))
}

// Batch is one attempt at a batch in one stage task.
type Batch struct {
	Attempt txn.Attempt
	Data    any // the processor's, from Begin

	sent map[topology.TaskID]int // tuples sent to each downstream task
	out  output
}

// Emit sends values on the data stream stream to the tasks its grouping
// picks, counting them for the batch's report.
func (bt *Batch) Emit(stream string, values []any) {
	out := make(topology.Values, 0, len(values)+1)
	out = append(append(out, bt.Attempt), values...)
	for _, task := range bt.out.EmitStream(stream, out) {
		bt.sent[task]++
	}
}

// NewBatchTo returns a batch of attempt a with the processor's data,
// whose tuples for other stages go to emit instead of a topology: for
// driving a Processor on its own, in tests.
func NewBatchTo(a txn.Attempt, data any, emit func(stream string, values []any)) *Batch {
	return &Batch{Attempt: a, Data: data, sent: map[topology.TaskID]int{}, out: emitTo(emit)}
}

// emitTo is an output that hands each emitted tuple, without its
// attempt, to a function; it acks, fails and reports nothing.
type emitTo func(stream string, values []any)

func (f emitTo) EmitStream(stream string, v topology.Values, _ ...*topology.Tuple) []topology.TaskID {
	f(stream, v[1:])
	return nil
}
func (emitTo) EmitDirect(topology.TaskID, string, topology.Values, ...*topology.Tuple) {}
func (emitTo) Ack(*topology.Tuple)                                                     {}
func (emitTo) Fail(*topology.Tuple)                                                    {}
func (emitTo) ReportError(error)                                                       {}
