package runtime

import (
	"context"
	"sync"

	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/internal/plan"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// Idle batches. An idle topology would start (and commit, with a store
// write each) an empty batch every BatchEmitInterval. The master instead
// learns, when a batch's processing completes, whether any source task
// emitted a tuple for it (sourceTally); if none did, the topology is idle
// and the coordinator starts batches at most every IdleBatchInterval
// (coord.Config.IdleInterval), until a batch carries tuples again or a
// source reports data waiting (Source.Waiting, asked at every tick while
// idle, so a DRPC request is not held back).
//
// The tally is kept in the process: the source tasks of the master's own
// process note what they emitted. Where some source task runs in another
// process (a run across worker processes), the master cannot tell a
// batch was empty, and it never treats the topology as idle.

// sourceTally counts, per batch attempt, the source tasks of this
// process that emitted their share of it and the tuples they emitted.
// The source tasks write it, the master reads it: it is safe for
// concurrent use.
type sourceTally struct {
	tasks int // source tasks of the topology, in every process

	mu sync.Mutex
	at map[txn.Attempt]tallied
}

type tallied struct {
	tasks  int
	tuples int64
}

func newSourceTally(p *plan.Plan) *sourceTally {
	t := &sourceTally{at: map[txn.Attempt]tallied{}}
	for _, s := range p.Stages {
		if s.IsSource() {
			t.tasks += s.Parallelism
		}
	}
	return t
}

// note records that one source task emitted n tuples for a.
func (t *sourceTally) note(a txn.Attempt, n int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.at[a]
	e.tasks++
	e.tuples += n
	t.at[a] = e
}

// empty reports whether every source task of the topology emitted its
// share of a, here, with no tuple at all; it forgets a.
func (t *sourceTally) empty(a txn.Attempt) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.at[a]
	delete(t.at, a)
	return ok && t.tasks > 0 && e.tasks >= t.tasks && e.tuples == 0
}

// forget drops the attempts of txids up to txid (failed attempts that
// were never asked about).
func (t *sourceTally) forget(txid txn.TxID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for a := range t.at {
		if a.TxID <= txid {
			delete(t.at, a)
		}
	}
}

// talliedExecutor is a source task's executor that notes in the tally
// how many tuples it emitted for each batch.
type talliedExecutor struct {
	spout.Executor
	tally *sourceTally
}

func (x talliedExecutor) EmitBatch(ctx context.Context, b spout.Batch, c spout.Collector) error {
	cc := &countingCollector{Collector: c}
	err := x.Executor.EmitBatch(ctx, b, cc)
	x.tally.note(b.Attempt, cc.n)
	return err
}

type countingCollector struct {
	spout.Collector
	n int64
}

func (c *countingCollector) Emit(values ...any) { c.n++; c.Collector.Emit(values...) }

// tallySources wraps the executors of spec's sources with t.
func tallySources(sources []Source, t *sourceTally) []Source {
	out := make([]Source, len(sources))
	for i, s := range sources {
		newExecutor := s.NewExecutor
		s.NewExecutor = func(store coordstore.Store, owner coordstore.Fence, stream string, task, numTasks int) (spout.Executor, error) {
			x, err := newExecutor(store, owner, stream, task, numTasks)
			if err != nil || x == nil {
				return x, err
			}
			return talliedExecutor{Executor: x, tally: t}, nil
		}
		out[i] = s
	}
	return out
}

// processed is called when the processing of attempt a completed: the
// topology is idle if a carried nothing. A processing ack of an earlier
// txid than one already seen (batches in flight complete out of order)
// changes nothing.
func (m *master) processed(a txn.Attempt) {
	if m.tally == nil {
		return
	}
	empty := m.tally.empty(a)
	if a.TxID < m.lastProcessed {
		return
	}
	m.lastProcessed = a.TxID
	m.setIdle(empty && !m.sourcesWaiting())
}

// sourcesWaiting reports whether a source says data waits for a batch.
func (m *master) sourcesWaiting() bool {
	for _, s := range m.sourceSpecs {
		if s.Waiting != nil && s.Waiting() {
			return true
		}
	}
	return false
}

// pollsWaiting reports whether, while idle, the master must ask its
// sources at every tick whether data waits.
func (m *master) pollsWaiting() bool {
	if !m.idle {
		return false
	}
	for _, s := range m.sourceSpecs {
		if s.Waiting != nil {
			return true
		}
	}
	return false
}

// setIdle tells the coordinator whether the topology is idle.
func (m *master) setIdle(idle bool) {
	if m.coord == nil || idle == m.idle {
		return
	}
	m.idle = idle
	m.coord.SetIdle(idle)
}
