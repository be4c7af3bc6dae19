package runtime

import (
	"errors"
	"fmt"
	"maps"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident/internal/completion"
	"github.com/squallstream/squall/trident/internal/plan"
	"github.com/squallstream/squall/txn"
)

// The bolt is the shell of its completion machine: it feeds it the batch
// tuples it receives and executes the actions it queues, in order, after
// every input (see package completion for the contract).

// ErrCountMismatch is reported when a batch's tuples did not all arrive.
var ErrCountMismatch = errors.New("trident: tuple count mismatch")

// completionConfig is the shape of stage s as one of its tasks sees it.
func completionConfig(s *plan.Stage, info topology.TaskInfo) completion.Config {
	cfg := completion.Config{Committer: s.Committer}
	for _, up := range s.Upstream {
		n := len(info.Tasks(up.Name))
		cfg.Reports += n
		if up.Late {
			cfg.Late = append(cfg.Late, up.Name)
		} else {
			cfg.EarlyReports += n
		}
	}
	return cfg
}

// data runs the stage's operations on one tuple of a batch, unless the
// batch's attempt failed or is stale.
func (b *stageBolt) data(t *topology.Tuple) {
	vals := t.Values()
	a := vals[0].(txn.Attempt)
	in := b.inputs[t.SourceStream()]
	if b.completion.Data(a, !in.Up.Late) {
		b.drain()
		if err := b.proc.Execute(b.batch(a), in, vals[1:]); err != nil {
			b.failed(a, err)
			b.completion.Fail(a, err)
		}
	}
	b.drain()
	b.out.Ack(t)
}

// report counts one upstream task's report for a batch.
func (b *stageBolt) report(t *topology.Tuple) {
	b.completion.Report(t.Value(0).(txn.Attempt), t.SourceComponent(), t.Value(1).(int), held(t))
	b.drain()
}

// commitBatch starts the commit of a processed batch.
func (b *stageBolt) commitBatch(t *topology.Tuple) {
	b.completion.Commit(t.Value(0).(txn.Attempt), held(t))
	b.drain()
}

// held returns a copy of t for the completion machine to hold and ack
// later. The stage bolt is a topology.Borrower: t points into a batch its
// executor reuses once Execute returns. Only count reports and commits are
// held (a few per batch); data tuples are acked at once.
func held(t *topology.Tuple) *topology.Tuple {
	h := *t
	return &h
}

// BorrowsTuples marks the stage bolt as a topology.Borrower: it keeps no
// *Tuple after Execute returns (held copies them).
func (b *stageBolt) BorrowsTuples() {}

// success forgets batches up to txid.
func (b *stageBolt) success(txid txn.TxID) {
	b.health.succeeded()
	if b.completion != nil {
		b.completion.Success(txid)
		b.drain()
	} else {
		maps.DeleteFunc(b.batches, func(t txn.TxID, _ *Batch) bool { return t <= txid }) // a source stage's, held for their commit
	}
	if b.executor != nil {
		if err := b.executor.Success(b.ctx, txid); err != nil && !b.stopping(err) {
			b.fatalUnlessRetryable(err)
			b.out.ReportError(err)
		}
	}
}

// drain executes the completion machine's actions.
func (b *stageBolt) drain() {
	for {
		act, ok := b.completion.Next()
		if !ok {
			return
		}
		switch act.Kind {
		case completion.Ack:
			b.out.Ack(act.Handle)
		case completion.Fail:
			b.out.Fail(act.Handle)
		case completion.Finish:
			err := b.finish(b.batch(act.Attempt), act.Handle)
			if err != nil {
				b.failed(act.Attempt, err)
			}
			b.completion.Finished(act.Attempt, err)
		case completion.Drop:
			if bt := b.batches[act.Attempt.TxID]; bt != nil && bt.Attempt == act.Attempt {
				delete(b.batches, act.Attempt.TxID)
			}
		case completion.Mismatch:
			b.failed(act.Attempt, countMismatch(b.stage.Name, b.task.ID, act))
		case completion.Unprocessed:
			b.out.ReportError(fmt.Errorf("trident: %s task %d: commit for %v, which this task did not process", b.stage.Name, b.task.ID, act.Attempt))
		}
	}
}

// finish ends a batch: the processor finishes it (aggregations complete,
// committers write state), then every downstream task is told how many
// tuples it was sent, anchored to anchor.
func (b *stageBolt) finish(bt *Batch, anchor *topology.Tuple) error {
	if err := b.proc.Finish(bt); err != nil {
		return err
	}
	for _, task := range b.downstream {
		b.out.EmitDirect(task, streamReport, topology.Values{bt.Attempt, bt.sent[task]}, anchor)
	}
	return nil
}

// countMismatch is the error of a Mismatch action.
func countMismatch(stage string, task topology.TaskID, act completion.Action[*topology.Tuple]) error {
	phase := ""
	if act.Early {
		phase = " in the processing phase"
	}
	return failure.Reported(fmt.Errorf("%w: %s task %d, batch %v: upstream sent %d tuples%s, %d arrived",
		ErrCountMismatch, stage, task, act.Attempt, act.Expected, phase, act.Arrived))
}

// newBatch returns fresh per-batch data for attempt a.
func (b *stageBolt) newBatch(a txn.Attempt) *Batch {
	return &Batch{Attempt: a, Data: b.proc.Begin(a), sent: map[topology.TaskID]int{}, out: b.out}
}

// batch returns the per-batch data of attempt a, replacing that of an
// older attempt.
func (b *stageBolt) batch(a txn.Attempt) *Batch {
	bt := b.batches[a.TxID]
	if bt == nil || bt.Attempt != a {
		bt = b.newBatch(a)
		b.batches[a.TxID] = bt
	}
	return bt
}

// failed handles the failure of attempt a before the machine releases its
// tuples: a fatal err stops the worker, a reported one shows to operators.
func (b *stageBolt) failed(a txn.Attempt, err error) {
	b.fatalUnlessRetryable(err)
	b.reportFailure(a, err)
}
