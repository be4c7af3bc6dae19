package trident

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/internal/clock"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident/internal/completion"
	"github.com/squallstream/squall/trident/spout"
)

// groupBolt is one task of a group: it runs the group's operations for
// every batch and counts what it sends downstream. It is the shell of a
// completion machine, which tracks each batch until every upstream task
// has reported how many tuples it sent (complete.go).
type groupBolt struct {
	plan     *plan
	g        *group
	status   *status
	topology string
	log      *slog.Logger
	cfg      *Config
	ctx      context.Context
	out      output
	task     topology.TaskID

	// completion tracks when each batch is complete (not for source
	// groups, which finish a batch as they emit it); batches holds the
	// per-batch data of the attempts it tracks, until it drops them.
	completion *completion.Machine[*topology.Tuple]
	batches    map[state.TxID]*batch
	downstream []topology.TaskID // tasks that get our coordination tuples
	inputs     map[string]input  // by topology stream
	persist    map[*node]persistTask
	static     map[*node]any  // opened static state of query nodes
	executor   spout.Executor // source groups only
	committing Attempt        // the batch being finished, for quarantined values
	health     health         // of this task's reported failures, for logging
}

// output is what a groupBolt needs of its collector
// (*topology.OutputCollector).
type output interface {
	EmitStream(stream string, v topology.Values, anchors ...*topology.Tuple) []topology.TaskID
	EmitDirect(task topology.TaskID, stream string, v topology.Values, anchors ...*topology.Tuple)
	Ack(t *topology.Tuple)
	Fail(t *topology.Tuple)
	ReportError(err error)
}

// batch is the bolt's data for one attempt at a batch: what it sent and
// the operations' per-batch state. When the batch is complete is the
// completion machine's business.
type batch struct {
	attempt Attempt
	sent    map[topology.TaskID]int
	accs    map[*node]batchAcc
	aggs    map[*node]*aggregation
	queries map[*node]queryBatch
	joins   map[*node]*joinBatch
}

func newBatch(a Attempt) *batch {
	return &batch{attempt: a, sent: map[topology.TaskID]int{}, accs: map[*node]batchAcc{}, aggs: map[*node]*aggregation{}, queries: map[*node]queryBatch{}, joins: map[*node]*joinBatch{}}
}

func newGroupBolt(p *plan, g *group, t *Topology, cfg *Config, st *status) func() topology.Bolt {
	log := cfg.Topology.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return func() topology.Bolt {
		return &groupBolt{plan: p, g: g, status: st, topology: t.name, log: log, cfg: cfg}
	}
}

func (b *groupBolt) Prepare(ctx context.Context, info topology.TaskInfo, out *topology.OutputCollector) error {
	if b.status.Err() != nil {
		b.out = out
		return nil // halted for good: Execute fails every tuple
	}
	// State is opened and written for this submission's generation, so
	// that a newer owner's state rejects (or outranks) these writes.
	ctx = state.WithFence(ctx, b.status.owner)
	b.ctx, b.out, b.task = ctx, out, info.Task
	b.batches = map[state.TxID]*batch{}
	b.inputs = map[string]input{}
	for _, in := range b.g.inputs {
		b.inputs[in.stream()] = in
	}
	b.persist = map[*node]persistTask{}
	if !b.g.isSource() {
		m, err := completion.New[*topology.Tuple](completionConfig(b.g, info))
		if err != nil {
			return fmt.Errorf("trident: %s: %w", b.g.name, err)
		}
		b.completion = m
	}
	for _, down := range b.g.downstream {
		b.downstream = append(b.downstream, info.Tasks(down.name)...)
	}
	b.static = map[*node]any{}
	for _, n := range b.g.nodes {
		if q, ok := n.op.(*queryOp); ok && q.static != nil {
			st, err := q.static(ctx, info.Index, info.NumTasks)
			if err != nil {
				return fmt.Errorf("opening static state: %w", err)
			}
			if _, ok := st.(state.CorruptHandling); ok {
				if err := b.guardCorrupt(n, st); err != nil {
					return err
				}
			}
			b.static[n] = st
		}
		if op, ok := n.op.(*persistOp); ok {
			p, err := op.p.open(ctx, info.Index, info.NumTasks)
			if errors.Is(err, ErrSuperseded) {
				// A newer owner opened this state: halt, do not restart.
				b.status.halt(superseded(b.status.owner, err))
				return nil
			}
			if err != nil {
				return fmt.Errorf("opening state: %w", err)
			}
			if err := b.guardCorrupt(n, p.state()); err != nil {
				return err
			}
			b.persist[n] = p
		}
	}
	if b.g.isSource() {
		src := b.g.entry.source()
		x, err := src.executor(b.cfg.Store, b.status.owner, src.id, info.Index, info.NumTasks)
		if err != nil {
			return fmt.Errorf("stream %q: %w", src.id, err)
		}
		b.executor = x
	}
	return nil
}

func (b *groupBolt) Execute(t *topology.Tuple) {
	if b.status.Err() != nil {
		b.out.Fail(t) // halted for good: no batch completes, no state is written
		return
	}
	switch t.SourceStream() {
	case streamBatch:
		b.emitBatch(t)
	case streamFreeze:
		a := t.Value(0).(Attempt)
		b.settle(t, a, b.executor.BeginCommit(b.ctx, a))
	case streamSuccess:
		b.success(t.Value(0).(Attempt).TxID)
		b.out.Ack(t)
	case streamCommit:
		b.commitBatch(t)
	case streamCoord:
		b.coordinate(t)
	default:
		b.data(t)
	}
}

// settle acks t, or fails it if err is retryable; a fatal err stops the
// worker.
func (b *groupBolt) settle(t *topology.Tuple, a Attempt, err error) {
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
func (b *groupBolt) reportFailure(a Attempt, err error) {
	b.status.recordFailure(a.TxID, err)
	if failure.IsReported(err) && b.health.failed(clock.Or(b.cfg.Topology.Clock).Now(), err) != healthQuiet {
		b.out.ReportError(fmt.Errorf("trident: %s task %d, batch %v: %w", b.g.name, b.task, a, err))
	}
}

// fatalUnlessRetryable crashes the worker on an error that is not
// retryable. An error while the worker is stopping (its context is done)
// is not a crash: the batch stays uncommitted and is replayed after a
// restart.
func (b *groupBolt) fatalUnlessRetryable(err error) {
	if b.ctx.Err() != nil && errors.Is(err, b.ctx.Err()) {
		return
	}
	if errors.Is(err, ErrSuperseded) {
		// Another process owns the topology: halt for good, no restart.
		b.status.halt(superseded(b.status.owner, err))
		return
	}
	if !failure.IsRetryable(err) {
		panic(fmt.Errorf("trident: %s task %d: %w", b.g.name, b.task, err))
	}
}

// emitBatch has the source's executor emit this task's share of a batch,
// then reports the counts downstream, anchored to the announcement. A
// source group waits for no reports: it finishes a batch as it emits it.
func (b *groupBolt) emitBatch(t *topology.Tuple) {
	ann := t.Value(0).(announcement)
	bt := newBatch(ann.attempt)
	c := &sourceCollector{b: b, bt: bt}
	err := b.executor.EmitBatch(b.ctx, ann.batches[b.g.sourceIndex], c)
	if err == nil {
		err = c.err
	}
	if err == nil {
		err = b.finish(bt, t)
	}
	b.settle(t, ann.attempt, err)
}

type sourceCollector struct {
	b   *groupBolt
	bt  *batch
	err error
}

func (c *sourceCollector) Emit(values ...any) {
	if c.err == nil {
		c.err = c.b.emitFrom(c.b.g.entry, c.bt, values)
	}
}

func (c *sourceCollector) ReportError(err error) { c.b.out.ReportError(err) }

func (b *groupBolt) Cleanup() error {
	if b.executor != nil {
		return b.executor.Close()
	}
	return nil
}
