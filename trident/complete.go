package trident

import (
	"errors"
	"fmt"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident/internal/completion"
)

// The bolt is the shell of its completion machine: it feeds it the batch
// tuples it receives and executes the actions it queues, in order, after
// every input (see package completion for the contract).

// ErrCountMismatch is reported when a batch's tuples did not all arrive.
var ErrCountMismatch = errors.New("trident: tuple count mismatch")

// completionConfig is the shape of group g as one of its tasks sees it.
func completionConfig(g *group, info topology.TaskInfo) completion.Config {
	cfg := completion.Config{Committer: g.committer}
	for _, up := range g.upstream {
		n := len(info.Tasks(up.name))
		cfg.Reports += n
		if up.late {
			cfg.Late = append(cfg.Late, up.name)
		} else {
			cfg.EarlyReports += n
		}
	}
	return cfg
}

// data runs the group's operations on one tuple of a batch, unless the
// batch's attempt failed or is stale.
func (b *groupBolt) data(t *topology.Tuple) {
	vals := t.Values()
	a := vals[0].(Attempt)
	in := b.inputs[t.SourceStream()]
	if b.completion.Data(a, !in.up.late) {
		b.drain()
		if err := b.enter(in, b.batch(a), vals[1:]); err != nil {
			b.failed(a, err)
			b.completion.Fail(a, err)
		}
	}
	b.drain()
	b.out.Ack(t)
}

// coordinate counts one upstream task's report for a batch.
func (b *groupBolt) coordinate(t *topology.Tuple) {
	b.completion.Report(t.Value(0).(Attempt), t.SourceComponent(), t.Value(1).(int), t)
	b.drain()
}

// commitBatch starts the commit of a processed batch.
func (b *groupBolt) commitBatch(t *topology.Tuple) {
	b.completion.Commit(t.Value(0).(Attempt), t)
	b.drain()
}

// success forgets batches up to txid.
func (b *groupBolt) success(txid state.TxID) {
	b.health.succeeded()
	if b.completion != nil {
		b.completion.Success(txid)
		b.drain()
	}
	if b.executor != nil {
		if err := b.executor.Success(b.ctx, txid); err != nil {
			b.fatalUnlessRetryable(err)
			b.out.ReportError(err)
		}
	}
}

// drain executes the completion machine's actions.
func (b *groupBolt) drain() {
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
			if bt := b.batches[act.Attempt.TxID]; bt != nil && bt.attempt == act.Attempt {
				delete(b.batches, act.Attempt.TxID)
			}
		case completion.Mismatch:
			b.failed(act.Attempt, countMismatch(b.g.name, b.task, act))
		case completion.Unprocessed:
			b.out.ReportError(fmt.Errorf("trident: %s task %d: commit for %v, which this task did not process", b.g.name, b.task, act.Attempt))
		}
	}
}

// countMismatch is the error of a Mismatch action.
func countMismatch(group string, task topology.TaskID, act completion.Action[*topology.Tuple]) error {
	phase := ""
	if act.Early {
		phase = " in the processing phase"
	}
	return failure.Reported(fmt.Errorf("%w: %s task %d, batch %v: upstream sent %d tuples%s, %d arrived",
		ErrCountMismatch, group, task, act.Attempt, act.Expected, phase, act.Arrived))
}

// batch returns the per-batch data of attempt a, replacing that of an
// older attempt.
func (b *groupBolt) batch(a Attempt) *batch {
	bt := b.batches[a.TxID]
	if bt == nil || bt.attempt != a {
		bt = newBatch(a)
		b.batches[a.TxID] = bt
	}
	return bt
}

// failed handles the failure of attempt a before the machine releases its
// tuples: a fatal err stops the worker, a reported one shows to operators.
func (b *groupBolt) failed(a Attempt, err error) {
	b.fatalUnlessRetryable(err)
	b.reportFailure(a, err)
}
