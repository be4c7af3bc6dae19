package trident

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

// stageTask runs the operations of one stage in one task: it is the
// runtime.Processor this package compiles from a stage's nodes. The
// runtime's stage bolt around it tracks batches, counts and reports what
// it emits, and decides what a failure does.
type stageTask struct {
	stage   *plan.Stage
	cfg     *Config
	fanouts []fanout // by node id
	// collectors are the Each nodes' reused collectors (by node id);
	// values and strings hold what they emit.
	collectors []eachCollector
	values     arena.Slices[any]
	strings    arena.Strings
	entry      *node // the node the stage starts at
	task       *runtime.Task
	ctx        context.Context
	drpc       []*drpcDecl // by node id: the DRPC function it works for; nil if none

	persist    map[*node]persistTask
	states     *stateMetrics // the counters of the persistent states
	static     map[*node]any // opened static state of query nodes
	committing txn.Attempt   // the batch being finished, for quarantined values
}

// fanout is where a node's tuples go: its children in this stage, and the
// data stream to other stages ("" if none), from the plan.
type fanout struct {
	local  []*node
	stream string
	reuse  *reusedTuple // an Each node's output storage if its consumers borrow
}

// batchData is a stage task's data for one attempt at a batch: the
// operations' per-batch state.
type batchData struct {
	accs    []batchAcc     // by node id; looked up per tuple
	aggs    []*aggregation // by node id; looked up per tuple
	queries map[*node]queryBatch
	joins   map[*node]*joinBatch
	drpc    []batchRequest // the batch's DRPC requests, as the task met them
}

func newStageTask(p *plan.Plan, s *plan.Stage, nodes []*node, cfg *Config, states *stateMetrics) *stageTask {
	st := &stageTask{stage: s, cfg: cfg, states: states, fanouts: make([]fanout, len(nodes)), collectors: make([]eachCollector, len(nodes)), entry: nodes[s.Entry.ID]}
	for _, pn := range s.Nodes {
		o := p.Fanout(pn)
		f := fanout{stream: o.Stream}
		for _, c := range o.Local {
			f.local = append(f.local, nodes[c.ID])
		}
		f.reuse = reusable(nodes[pn.ID], f)
		st.fanouts[pn.ID] = f
	}
	return st
}

// node returns the declared node a plan node describes.
func nodeOf(pn *plan.Node) *node { return pn.Payload.(*node) }

// Open opens the stage's state: the static state its queries read and
// the state its persistent nodes write.
func (s *stageTask) Open(ctx context.Context, task *runtime.Task) error {
	s.ctx, s.task = ctx, task
	s.persist = map[*node]persistTask{}
	s.static = map[*node]any{}
	for _, pn := range s.stage.Nodes {
		n := nodeOf(pn)
		if q, ok := n.op.(*queryOp); ok && q.static != nil {
			st, err := q.static(ctx, task.Index, task.NumTasks)
			if err != nil {
				return fmt.Errorf("opening static state: %w", err)
			}
			if _, ok := st.(state.CorruptHandling); ok {
				if err := s.guardCorrupt(st); err != nil {
					return err
				}
			}
			s.static[n] = st
		}
		if op, ok := n.op.(*persistOp); ok {
			var p persistTask
			var err error
			w, isWindow := op.p.(windowPersister)
			if isWindow {
				p, err = w.openWindow(ctx, task.Index, task.NumTasks, s.cfg.Topology.Clock)
			} else {
				p, err = op.p.open(ctx, task.Index, task.NumTasks)
			}
			if errors.Is(err, ErrSuperseded) {
				// A newer owner opened this state: halt, do not restart.
				task.Halt(err)
				return nil
			}
			if err != nil {
				return fmt.Errorf("opening state: %w", err)
			}
			if !isWindow { // a window's undecodable record always fails its batch
				if err := s.guardCorrupt(p.state()); err != nil {
					return err
				}
			}
			if s.cfg.RequireDurableState && !s.cfg.AllowVolatileState && state.IsVolatile(p.state()) {
				task.Halt(fmt.Errorf("%w: the state of node %d keeps its data in this process's memory, lost when a worker restarts; "+
					"use a durable store (state/bolt, state/cassandra) or set Config.AllowVolatileState", ErrVolatileState, n.id))
				return nil
			}
			s.persist[n] = p
		}
	}
	return nil
}

// Begin returns fresh per-batch data.
func (s *stageTask) Begin(txn.Attempt) any {
	n := len(s.fanouts)
	return &batchData{accs: make([]batchAcc, n), aggs: make([]*aggregation, n), queries: map[*node]queryBatch{}, joins: map[*node]*joinBatch{}}
}

// Source runs a tuple the stage's source emitted.
func (s *stageTask) Source(bt *runtime.Batch, values []any) error {
	return s.emitFrom(s.entry, bt, values)
}

// Execute runs a tuple that arrived on input in through the stage: a
// repartition or merge passes it on, a join keeps it for the end of the
// batch, any other node processes it.
func (s *stageTask) Execute(bt *runtime.Batch, in plan.Input, values []any) error {
	entry := nodeOf(in.Entry)
	switch op := entry.op.(type) {
	case *partitionOp, *mergeOp:
		return s.emitFrom(entry, bt, values)
	case *joinOp:
		if s.abandoned(entry, bt) {
			return nil
		}
		data := bt.Data.(*batchData)
		j := data.joins[entry]
		if j == nil {
			j = op.plan.newBatch()
			data.joins[entry] = j
		}
		return j.add(in.Side, values)
	}
	return s.process(entry, bt, values)
}
