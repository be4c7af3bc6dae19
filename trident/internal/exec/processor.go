package exec

import (
	"context"
	"errors"
	"fmt"

	"github.com/squallstream/squall/internal/arena"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/trident/internal/plan"
	"github.com/squallstream/squall/trident/internal/runtime"
	"github.com/squallstream/squall/txn"
)

// Processor runs the operations of one stage in one task: it is the
// runtime.Processor of the stage. The runtime's stage bolt around it
// tracks batches, counts and reports what it emits, and decides what a
// failure does.
type Processor struct {
	stage   *plan.Stage
	cfg     *Config
	ops     []Op     // by node id: the operations of the stage's nodes (see op)
	fanouts []fanout // by node id
	// collectors are the Each and FlatMap nodes' reused collectors (by
	// node id); values and strings hold what they emit.
	collectors []collector
	values     arena.Slices[any]
	strings    arena.Strings
	entry      *plan.Node // the node the stage starts at
	task       *runtime.Task
	ctx        context.Context
	requests   []*Request // by node id: the DRPC function it works for; nil if none

	persist    []PersistTask // by node id: the opened state of persistent nodes
	states     *States       // the counters of the persistent states
	static     []any         // by node id: the opened static state of query nodes
	committing txn.Attempt   // the batch being finished, for quarantined values
}

// fanout is where a node's tuples go: its children in this stage, and the
// data stream to other stages ("" if none), from the plan.
type fanout struct {
	local  []*plan.Node
	stream string
	reuse  *reusedTuple // an Each node's output storage if its consumers borrow
}

// batchData is a stage task's data for one attempt at a batch: the
// operations' per-batch state, by node id.
type batchData struct {
	accs    []BatchAcc
	aggs    []*aggregation
	queries []QueryBatch
	joins   []*joinBatch
	drpc    []batchRequest // the batch's DRPC requests, as the task met them
}

// NewProcessor returns the processor of stage s of plan p, whose graph
// has nodes nodes. states counts the persistent states' commits (nil
// counts nothing); requests gives, by node id, the DRPC function each
// node works for (nil if the topology serves none).
func NewProcessor(p *plan.Plan, s *plan.Stage, nodes int, cfg *Config, states *States, requests []*Request) *Processor {
	pr := &Processor{stage: s, cfg: cfg, states: states, requests: requests, entry: s.Entry,
		ops: make([]Op, nodes), fanouts: make([]fanout, nodes), collectors: make([]collector, nodes)}
	for _, n := range s.Nodes {
		pr.ops[n.ID] = opOf(n)
		o := p.Fanout(n)
		f := fanout{local: o.Local, stream: o.Stream}
		f.reuse = reusable(n, f)
		if f.reuse != nil {
			f.reuse.sole = soleStringBorrower(f.reuse.to)
		}
		pr.fanouts[n.ID] = f
		pr.collectors[n.ID] = collector{s: pr, n: n, reuse: f.reuse, width: len(n.Fields)}
	}
	return pr
}

// opOf returns the operation of a plan node.
func opOf(n *plan.Node) Op { return n.Payload.(Op) }

// op returns the operation of node n of the stage, asserted once in
// NewProcessor: opOf's assertion from the payload's empty interface to Op
// looks the pair of types up in a cache, which was 4 % of the word
// count's time when done for every tuple at every node.
func (s *Processor) op(n *plan.Node) Op {
	if op := s.ops[n.ID]; op != nil {
		return op
	}
	return opOf(n)
}

// Open opens the stage's state: the static state its queries read and
// the state its persistent nodes write.
func (s *Processor) Open(ctx context.Context, task *runtime.Task) error {
	s.ctx, s.task = ctx, task
	s.persist = make([]PersistTask, len(s.fanouts))
	s.static = make([]any, len(s.fanouts))
	for _, n := range s.stage.Nodes {
		switch op := opOf(n).(type) {
		case *Query:
			if op.Static == nil {
				continue
			}
			st, err := op.Static(ctx, task.Index, task.NumTasks)
			if err != nil {
				return fmt.Errorf("opening static state: %w", err)
			}
			if _, ok := st.(state.CorruptHandling); ok {
				if err := s.guardCorrupt(st); err != nil {
					return err
				}
			}
			s.static[n.ID] = st
		case *Persist:
			var p PersistTask
			var err error
			c, clocked := op.P.(ClockedPersister)
			if clocked {
				p, err = c.OpenClocked(ctx, task.Index, task.NumTasks, s.cfg.Clock)
			} else {
				p, err = op.P.Open(ctx, task.Index, task.NumTasks)
			}
			if errors.Is(err, state.ErrFenced) {
				// A newer owner opened this state: halt, do not restart.
				task.Halt(err)
				return nil
			}
			if err != nil {
				return fmt.Errorf("opening state: %w", err)
			}
			if !clocked { // a window's undecodable record always fails its batch
				if err := s.guardCorrupt(p.State()); err != nil {
					return err
				}
			}
			if s.cfg.RequireDurableState && state.IsVolatile(p.State()) {
				task.Halt(fmt.Errorf("%w: the state of node %d keeps its data in this process's memory, lost when a worker restarts; "+
					"use a durable store (state/bolt, state/cassandra) or set Config.AllowVolatileState", ErrVolatileState, n.ID))
				return nil
			}
			s.persist[n.ID] = p
		}
	}
	return nil
}

// Begin returns fresh per-batch data.
func (s *Processor) Begin(txn.Attempt) any {
	n := len(s.fanouts)
	return &batchData{accs: make([]BatchAcc, n), aggs: make([]*aggregation, n), queries: make([]QueryBatch, n), joins: make([]*joinBatch, n)}
}

// Source runs a tuple the stage's source emitted.
func (s *Processor) Source(bt *runtime.Batch, values []any) error {
	return s.emitFrom(s.entry, bt, values)
}

// Execute runs a tuple that arrived on input in through the stage: a
// repartition or merge passes it on, a join keeps it for the end of the
// batch, any other node processes it.
func (s *Processor) Execute(bt *runtime.Batch, in plan.Input, values []any) error {
	entry := in.Entry
	switch op := s.op(entry).(type) {
	case *Partition, *Merge:
		return s.emitFrom(entry, bt, values)
	case *Join:
		if s.abandoned(entry, bt) {
			return nil
		}
		joins := bt.Data.(*batchData).joins
		j := joins[entry.ID]
		if j == nil {
			j = op.Plan.newBatch()
			joins[entry.ID] = j
		}
		return j.add(in.Side, values)
	}
	return s.process(entry, bt, values)
}
