package trident

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/spout"
)

// groupBolt is one task of a group: it runs the group's operations for
// every batch, counts what it sends downstream, and tracks each batch until
// every upstream task has reported how many tuples it sent.
type groupBolt struct {
	g           *group
	store       coordstore.Store
	status      *status
	topology    string
	deadLetters DeadLetters
	log         *slog.Logger
	cfg         *Config
	ctx         context.Context
	out         output
	task        topology.TaskID

	expectedReports int               // coordination tuples per batch
	earlyReports    int               // of which from groups that report in the processing phase
	lateFrom        map[string]bool   // upstream components that report in the commit phase
	downstream      []topology.TaskID // tasks that get our coordination tuples
	batches         map[state.TxID]*batch
	finished        map[state.TxID]uint32 // the attempt that finished each txid, until its success
	inputs          map[string]input      // by topology stream
	persist         map[*node]persistTask
	static          map[*node]any  // opened static state of query nodes
	executor        spout.Executor // source groups only
	committing      Attempt        // the batch being finished, for quarantined values
	health          health         // of this task's reported failures, for logging
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

// batch is the bolt's record of one attempt at a batch.
type batch struct {
	attempt  Attempt
	received int // data tuples received
	expected int // data tuples upstream tasks say they sent
	reports  int // coordination tuples received
	held     *topology.Tuple
	commit   *topology.Tuple
	early    phaseCount // the processing-phase share, for groups with late inputs
	done     bool       // processing finished (committers: waiting for commit)
	failed   error
	sent     map[topology.TaskID]int
	accs     map[*node]batchAcc
	aggs     map[*node]*aggregation
	queries  map[*node]queryBatch
	joins    map[*node]*joinBatch
}

func newGroupBolt(g *group, t *Topology, cfg *Config, st *status) func() topology.Bolt {
	log := cfg.Topology.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return func() topology.Bolt {
		return &groupBolt{g: g, store: cfg.Store, status: st, topology: t.name, deadLetters: cfg.DeadLetters, log: log, cfg: cfg}
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
	b.finished = map[state.TxID]uint32{}
	b.inputs = map[string]input{}
	for _, in := range b.g.inputs {
		b.inputs[in.stream()] = in
	}
	b.persist = map[*node]persistTask{}
	b.lateFrom = map[string]bool{}
	for _, up := range b.g.upstream {
		n := len(info.Tasks(up.name))
		b.expectedReports += n
		if up.late {
			b.lateFrom[up.name] = true
		} else {
			b.earlyReports += n
		}
	}
	for _, down := range b.g.downstream {
		b.downstream = append(b.downstream, info.Tasks(down.name)...)
	}
	b.static = map[*node]any{}
	for _, n := range b.g.nodes {
		if n.openStatic != nil {
			st, err := n.openStatic(ctx, info.Index, info.NumTasks)
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
		if n.kind == kindPersist {
			p, err := n.persist.open(ctx, info.Index, info.NumTasks)
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
		src := b.g.entry.source
		x, err := src.executor(b.store, b.status.owner, src.id, info.Index, info.NumTasks)
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
	if failure.IsReported(err) && b.health.failed(time.Now(), err) != healthQuiet {
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
// then reports the counts downstream, anchored to the announcement.
func (b *groupBolt) emitBatch(t *topology.Tuple) {
	ann := t.Value(0).(announcement)
	bt := b.track(ann.attempt)
	if bt == nil {
		b.out.Ack(t)
		return
	}
	c := &sourceCollector{b: b, bt: bt}
	err := b.executor.EmitBatch(b.ctx, ann.batches[b.g.sourceIndex], c)
	if err == nil {
		err = c.err
	}
	if err == nil {
		err = b.finish(bt, t)
	}
	delete(b.batches, bt.attempt.TxID)
	b.settle(t, ann.attempt, err)
}

type sourceCollector struct {
	b   *groupBolt
	bt  *batch
	err error
}

func (c *sourceCollector) Emit(values []any) {
	if c.err == nil {
		c.err = c.b.emitFrom(c.b.g.entry, c.bt, values)
	}
}

func (c *sourceCollector) ReportError(err error) { c.b.out.ReportError(err) }

// track returns the record of attempt a, replacing the record of an older
// attempt at the same txid; it returns nil for an attempt older than the
// one tracked (whose batch already failed).
func (b *groupBolt) track(a Attempt) *batch {
	if n, ok := b.finished[a.TxID]; ok && a.N <= n {
		return nil // a late tuple of a finished or older attempt
	}
	bt := b.batches[a.TxID]
	switch {
	case bt != nil && bt.attempt.N == a.N:
		return bt
	case bt != nil && bt.attempt.N > a.N:
		return nil
	case bt != nil:
		b.abandon(bt)
	}
	bt = &batch{attempt: a, sent: map[topology.TaskID]int{}, accs: map[*node]batchAcc{}, aggs: map[*node]*aggregation{}, queries: map[*node]queryBatch{}, joins: map[*node]*joinBatch{}}
	b.batches[a.TxID] = bt
	return bt
}

// abandon drops a batch record, failing the tuples it holds.
func (b *groupBolt) abandon(bt *batch) {
	b.release(bt)
	delete(b.batches, bt.attempt.TxID)
}

// release fails the tuples a batch record holds, so that the batch's trees
// fail.
func (b *groupBolt) release(bt *batch) {
	for _, t := range []**topology.Tuple{&bt.held, &bt.early.held, &bt.commit} {
		if *t != nil {
			b.out.Fail(*t)
			*t = nil
		}
	}
}

// data runs the group's operations on one tuple of a batch.
func (b *groupBolt) data(t *topology.Tuple) {
	defer b.out.Ack(t)
	vals := t.Values()
	bt := b.track(vals[0].(Attempt))
	if bt == nil || bt.failed != nil {
		return
	}
	bt.received++
	in := b.inputs[t.SourceStream()]
	if !in.from.group.late {
		bt.early.received++
	}
	if err := b.enter(in, bt, vals[1:]); err != nil {
		b.failBatch(bt, err)
	}
}

// coordinate counts one upstream task's report for a batch. A committer
// acks reports at once (the processing phase ends when it has everything);
// any other group holds the first one until it has finished the batch, so
// that the batch's tree stays open until then.
//
// A group fed both by groups that report in the processing phase and by
// groups that report only in the commit phase (committers and what they
// feed) cannot finish a batch before its commit. It holds the first
// processing-phase report until everything sent in the processing phase
// has arrived, which ends its part of the processing phase, and the first
// commit-phase report until it has finished the batch.
func (b *groupBolt) coordinate(t *topology.Tuple) {
	bt := b.track(t.Value(0).(Attempt))
	if bt == nil {
		b.out.Ack(t)
		return
	}
	count := t.Value(1).(int)
	bt.reports++
	bt.expected += count
	mixed := len(b.lateFrom) > 0 && b.earlyReports > 0
	switch {
	case b.g.committer:
		b.out.Ack(t)
	case mixed && !b.lateFrom[t.SourceComponent()]:
		bt.early.reports++
		bt.early.expected += count
		if bt.early.held == nil {
			bt.early.held = t
		} else {
			b.out.Ack(t)
		}
		if !b.checkEarly(bt) {
			return
		}
	case bt.held == nil:
		bt.held = t
	default:
		b.out.Ack(t)
	}
	b.checkFinish(bt)
}

// phaseCount counts the processing-phase share of a batch in a group that
// also has commit-phase inputs.
type phaseCount struct {
	reports, expected, received int
	held                        *topology.Tuple
}

// checkEarly acks the held processing-phase report once every upstream
// group that reports in the processing phase has reported and all it sent
// arrived. It returns false if the batch failed (now or before).
func (b *groupBolt) checkEarly(bt *batch) bool {
	e := &bt.early
	if bt.failed != nil {
		b.release(bt)
		return false
	}
	if e.held == nil || e.reports < b.earlyReports {
		return true
	}
	if e.received != e.expected {
		b.failBatch(bt, failure.Reported(fmt.Errorf("%w: %s task %d, batch %v: upstream sent %d tuples in the processing phase, %d arrived",
			ErrCountMismatch, b.g.name, b.task, bt.attempt, e.expected, e.received)))
		return false
	}
	b.out.Ack(e.held)
	e.held = nil
	return true
}

// commitBatch starts the commit of a processed batch.
func (b *groupBolt) commitBatch(t *topology.Tuple) {
	a := t.Value(0).(Attempt)
	bt := b.batches[a.TxID]
	if len(b.lateFrom) > 0 && (bt == nil || bt.attempt.N < a.N) {
		// Fed in the commit phase, it may have received nothing of this
		// attempt yet (only, say, an older attempt that failed).
		bt = b.track(a)
	}
	if bt == nil || bt.attempt.N != a.N {
		b.out.ReportError(fmt.Errorf("trident: %s task %d: commit for %v, which this task did not process", b.g.name, b.task, a))
		b.out.Fail(t)
		return
	}
	bt.commit = t
	b.checkFinish(bt)
}

func (b *groupBolt) checkFinish(bt *batch) {
	if bt.failed != nil {
		b.release(bt)
		return
	}
	if bt.reports < b.expectedReports {
		return
	}
	if bt.received != bt.expected {
		err := failure.Reported(fmt.Errorf("%w: %s task %d, batch %v: upstream sent %d tuples, %d arrived",
			ErrCountMismatch, b.g.name, b.task, bt.attempt, bt.expected, bt.received))
		b.failBatch(bt, err)
		return
	}
	if b.g.committer && bt.commit == nil {
		bt.done = true
		return
	}
	anchor := bt.held
	if b.g.committer {
		anchor = bt.commit
	}
	if err := b.finish(bt, anchor); err != nil {
		b.failBatch(bt, err)
		return
	}
	delete(b.batches, bt.attempt.TxID)
	b.finished[bt.attempt.TxID] = bt.attempt.N
	b.out.Ack(anchor)
}

// ErrCountMismatch is reported when a batch's tuples did not all arrive.
var ErrCountMismatch = errors.New("trident: tuple count mismatch")

// failBatch fails a batch attempt: its held tuples fail, so its tree fails
// and the coordinator replays it. The record stays, so that tuples that
// arrive later for the attempt (its commit, say) fail too, until a newer
// attempt or the txid's success replaces it. A fatal err stops the worker.
func (b *groupBolt) failBatch(bt *batch, err error) {
	b.fatalUnlessRetryable(err)
	b.reportFailure(bt.attempt, err)
	bt.failed = err
	b.release(bt)
}

// finish ends a batch: aggregations complete and committers write it to
// state, in declaration order (so a node finishes after the nodes that feed
// it), then every downstream task is told how many tuples it was sent,
// anchored to anchor.
func (b *groupBolt) finish(bt *batch, anchor *topology.Tuple) error {
	b.committing = bt.attempt
	for _, n := range b.g.nodes {
		switch n.kind {
		case kindAggregate:
			a := b.aggregation(n, bt)
			if err := a.complete(); err != nil {
				return err
			}
			if err := a.takeEmitErr(); err != nil {
				return err
			}
		case kindJoin:
			if j := bt.joins[n]; j != nil {
				if err := j.run(func(v []any) error { return b.emitFrom(n, bt, v) }); err != nil {
					return err
				}
			}
		case kindQuery:
			q := bt.queries[n]
			if q == nil {
				continue
			}
			st := b.static[n]
			if n.stateNode != nil {
				st = b.persist[n.stateNode].state()
			}
			var emitErr error
			reject := func(err error, values []any) error { return b.rejected(err, bt.attempt, n.parent.sch.fields, values) }
			if err := q.run(b.ctx, st, b.aggregateOut(n, bt, &emitErr), reject); err != nil {
				return err
			}
			if emitErr != nil {
				return emitErr
			}
		case kindPersist:
			acc := bt.accs[n]
			if acc == nil {
				continue
			}
			var emitErr error
			out := &eachCollector{b: b, n: n, bt: bt, width: len(n.sch.fields), errp: &emitErr}
			if err := b.persist[n].commit(b.ctx, bt.attempt.TxID, acc, out); err != nil {
				return fmt.Errorf("%s: committing batch %v: %w", b.g.name, bt.attempt, err)
			}
			if emitErr != nil {
				return emitErr
			}
		}
	}
	for _, task := range b.downstream {
		b.out.EmitDirect(task, streamCoord, topology.Values{bt.attempt, bt.sent[task]}, anchor)
	}
	return nil
}

// aggregation is an aggregation node's state for one batch, with the
// first error its collectors met.
type aggregation struct {
	aggregateBatch
	emitErr error
}

// takeEmitErr returns the first error of an emit since the last call.
func (a *aggregation) takeEmitErr() error {
	err := a.emitErr
	a.emitErr = nil
	return err
}

// aggregation returns node n's state for the batch.
func (b *groupBolt) aggregation(n *node, bt *batch) *aggregation {
	a := bt.aggs[n]
	if a == nil {
		a = &aggregation{}
		a.aggregateBatch = n.aggregate.newBatch(bt.attempt, b.aggregateOut(n, bt, &a.emitErr))
		bt.aggs[n] = a
	}
	return a
}

// aggregateOut returns the collectors an aggregation emits through: each
// emitted tuple is the group's values followed by the emitted values. The
// first error of an emit is stored in *errp.
func (b *groupBolt) aggregateOut(n *node, bt *batch, errp *error) func(group []any) Collector {
	return func(group []any) Collector {
		return &eachCollector{b: b, n: n, bt: bt, base: group, width: len(n.sch.fields), errp: errp}
	}
}

// success forgets batches up to txid.
func (b *groupBolt) success(txid state.TxID) {
	b.health.succeeded()
	for t, bt := range b.batches {
		if t <= txid {
			b.abandon(bt)
		}
	}
	for t := range b.finished {
		if t <= txid {
			delete(b.finished, t)
		}
	}
	if b.executor != nil {
		if err := b.executor.Success(b.ctx, txid); err != nil {
			b.fatalUnlessRetryable(err)
			b.out.ReportError(err)
		}
	}
}

func (b *groupBolt) Cleanup() error {
	if b.executor != nil {
		return b.executor.Close()
	}
	return nil
}
