package runtime

import (
	"context"
	"errors"
	"fmt"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/internal/clock"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident/internal/completion"
	"github.com/squallstream/squall/trident/internal/plan"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// stageBolt is one task of a stage: it runs the stage's operations (its
// Processor) for every batch and counts what they send downstream. It is
// the shell of a completion machine, which tracks each batch until every
// upstream task has reported how many tuples it sent (complete.go).
type stageBolt struct {
	spec   Spec
	stage  *plan.Stage
	status *Status
	cfg    *Config
	proc   Processor
	task   Task
	ctx    context.Context
	out    output

	// completion tracks when each batch is complete (not for source
	// stages, which finish a batch as they emit it); batches holds the
	// per-batch data of the attempts it tracks, until it drops them.
	completion *completion.Machine[*topology.Tuple]
	batches    map[txn.TxID]*Batch
	downstream []topology.TaskID     // tasks that get our reports
	inputs     map[string]plan.Input // by topology stream
	executor   spout.Executor        // source stages only
	health     health                // of this task's reported failures, for logging
}

// output is what a stageBolt needs of its collector
// (*topology.OutputCollector).
type output interface {
	EmitStream(stream string, v topology.Values, anchors ...*topology.Tuple) []topology.TaskID
	EmitDirect(task topology.TaskID, stream string, v topology.Values, anchors ...*topology.Tuple)
	Ack(t *topology.Tuple)
	Fail(t *topology.Tuple)
	ReportError(err error)
}

func newStageBolt(spec Spec, s *plan.Stage, cfg *Config, st *Status) func() topology.Bolt {
	log := cfg.logger()
	return func() topology.Bolt {
		return &stageBolt{spec: spec, stage: s, status: st, cfg: cfg,
			task: Task{Topology: spec.Name, Stage: s, Log: log, Status: st}}
	}
}

func (b *stageBolt) Prepare(ctx context.Context, info topology.TaskInfo, out *topology.OutputCollector) error {
	b.out, b.task.out = out, out
	if b.status.Err() != nil {
		return nil // halted for good: Execute fails every tuple
	}
	// State is opened and written for this submission's generation, so
	// that a newer owner's state rejects (or outranks) these writes.
	ctx = state.WithFence(ctx, b.status.owner)
	b.ctx = ctx
	b.task.ID, b.task.Index, b.task.NumTasks = info.Task, info.Index, info.NumTasks
	b.batches = map[txn.TxID]*Batch{}
	b.inputs = map[string]plan.Input{}
	for _, in := range b.stage.Inputs {
		b.inputs[in.Stream()] = in
	}
	if !b.stage.IsSource() {
		m, err := completion.New[*topology.Tuple](completionConfig(b.stage, info))
		if err != nil {
			return fmt.Errorf("trident: %s: %w", b.stage.Name, err)
		}
		b.completion = m
	}
	for _, down := range b.stage.Downstream {
		b.downstream = append(b.downstream, info.Tasks(down.Name)...)
	}
	b.proc = b.spec.NewProcessor(b.stage)
	if err := b.proc.Open(ctx, &b.task); err != nil {
		return err
	}
	if b.status.Err() != nil {
		return nil // the processor met a newer owner's state: halted for good
	}
	if b.stage.IsSource() {
		src := b.spec.Sources[b.stage.SourceIndex]
		x, err := src.NewExecutor(b.cfg.Store, b.status.owner, src.ID, info.Index, info.NumTasks)
		if err != nil {
			return fmt.Errorf("stream %q: %w", src.ID, err)
		}
		b.executor = x
	}
	return nil
}

func (b *stageBolt) Execute(t *topology.Tuple) {
	if b.status.Err() != nil {
		b.out.Fail(t) // halted for good: no batch completes, no state is written
		return
	}
	switch t.SourceStream() {
	case streamBatch:
		b.emitBatch(t)
	case streamFreeze:
		a := t.Value(0).(txn.Attempt)
		b.settle(t, a, b.executor.BeginCommit(b.ctx, a))
	case streamSuccess:
		b.success(t.Value(0).(txn.Attempt).TxID)
		b.out.Ack(t)
	case streamCommit:
		if b.stage.IsSource() {
			b.commitSource(t)
		} else {
			b.commitBatch(t)
		}
	case streamReport:
		b.report(t)
	default:
		b.data(t)
	}
}

// settle acks t, or fails it if err is retryable; a fatal err stops the
// worker.
func (b *stageBolt) settle(t *topology.Tuple, a txn.Attempt, err error) {
	if err == nil {
		b.out.Ack(t)
		return
	}
	b.fatalUnlessRetryable(err)
	b.reportFailure(a, err)
	b.out.Fail(t)
}

// reportFailure remembers why attempt a failed and, for a reported
// failure, shows it to operators with the component, task and batch: once
// when this task starts failing and when the cause changes, not for every
// attempt (the master logs the recovery and counts the attempts).
func (b *stageBolt) reportFailure(a txn.Attempt, err error) {
	b.status.recordFailure(a.TxID, err)
	if failure.IsReported(err) && b.health.failed(clock.Or(b.cfg.Topology.Clock).Now(), err) != healthQuiet {
		b.out.ReportError(fmt.Errorf("trident: %s task %d, batch %v: %w", b.stage.Name, b.task.ID, a, err))
	}
}

// stopping reports whether err is the end of the worker's context: the
// worker stops, and the call it ended is neither a crash nor worth
// showing to operators.
func (b *stageBolt) stopping(err error) bool {
	return b.ctx.Err() != nil && errors.Is(err, b.ctx.Err())
}

// fatalUnlessRetryable crashes the worker on an error that is not
// retryable. An error while the worker is stopping (its context is done)
// is not a crash: the batch stays uncommitted and is replayed after a
// restart.
func (b *stageBolt) fatalUnlessRetryable(err error) {
	if b.stopping(err) {
		return
	}
	if errors.Is(err, ErrSuperseded) {
		// Another process owns the topology: halt for good, no restart.
		b.status.AddFencingRejection()
		b.status.Halt(Superseded(b.status.owner, err))
		return
	}
	if !failure.IsRetryable(err) {
		panic(fmt.Errorf("trident: %s task %d: %w", b.stage.Name, b.task.ID, err))
	}
}

// emitBatch has the source's executor emit this task's share of a batch,
// then reports the counts downstream, anchored to the announcement. A
// source stage waits for no reports: it finishes a batch as it emits it,
// unless it holds a committer, which writes state in the commit phase
// only: then the batch waits for its $commit (commitSource).
func (b *stageBolt) emitBatch(t *topology.Tuple) {
	ann := t.Value(0).(announcement)
	bt := b.newBatch(ann.attempt)
	c := &sourceCollector{b: b, bt: bt}
	err := b.executor.EmitBatch(b.ctx, ann.batches[b.stage.SourceIndex], c)
	if err == nil {
		err = c.err
	}
	if err == nil && b.stage.Committer {
		b.batches[ann.attempt.TxID] = bt
	} else if err == nil {
		err = b.finish(bt, t)
	}
	b.settle(t, ann.attempt, err)
}

// commitSource finishes, in its commit phase, a batch that a source stage
// holding a committer emitted. A commit for an attempt this task did not
// emit (it restarted meanwhile) fails: the batch is replayed.
func (b *stageBolt) commitSource(t *topology.Tuple) {
	a := t.Value(0).(txn.Attempt)
	bt := b.batches[a.TxID]
	if bt == nil || bt.Attempt != a {
		b.settle(t, a, failure.Retryable(fmt.Errorf("trident: %s task %d: commit for %v, which this task did not emit",
			b.stage.Name, b.task.ID, a)))
		return
	}
	delete(b.batches, a.TxID)
	b.settle(t, a, b.finish(bt, t))
}

type sourceCollector struct {
	b   *stageBolt
	bt  *Batch
	err error
}

func (c *sourceCollector) Emit(values ...any) {
	if c.err == nil {
		c.err = c.b.proc.Source(c.bt, values)
	}
}

func (c *sourceCollector) ReportError(err error) { c.b.out.ReportError(err) }

func (b *stageBolt) Cleanup() error {
	if b.executor != nil {
		return b.executor.Close()
	}
	return nil
}
