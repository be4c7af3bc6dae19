package simulation

import (
	"fmt"

	"github.com/squallstream/squall/acker"
	"github.com/squallstream/squall/trident/internal/coord"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// tree is a tuple tree the master roots: a batch, a freeze or a commit of
// an attempt.
type tree struct {
	kind    kind
	attempt txn.Attempt
}

// master is the simulated master spout: it executes the coordinator's
// actions and feeds it the outcomes of the trees it roots, as the
// runtime's master does (a commit is a freeze tree, then a commit tree).
type master struct {
	w     *world
	c     *coord.Coordinator
	spout *spout.Allocator
	trees map[acker.RootID]tree
}

// run executes the coordinator's actions, in order.
func (m *master) run() error {
	for m.c.HasReady() {
		for _, a := range m.c.Ready() {
			if err := m.do(a); err != nil {
				return err
			}
		}
		m.c.Advance()
	}
	return m.c.Err()
}

func (m *master) do(a coord.Action) error {
	w := m.w
	w.events.add(a.String())
	switch a.Kind {
	case coord.Persist:
		w.persisted = cloneState(a.State)
	case coord.EmitBatch:
		b, err := m.spout.Begin(w.ctx, a.Attempt)
		if err != nil {
			return fmt.Errorf("begin %v: %w", a.Attempt, err)
		}
		b.Committed = m.c.Committed()
		w.stats.Attempts++
		w.emitTree(tree{mBatch, a.Attempt}, allSources(), message{kind: mBatch, attempt: a.Attempt, batch: b})
	case coord.Commit:
		if err := m.spout.BeginCommit(w.ctx, a.Attempt); err != nil {
			return fmt.Errorf("begin commit %v: %w", a.Attempt, err)
		}
		if w.opt.SkipFreeze {
			m.commit(a.Attempt)
			break
		}
		w.emitTree(tree{mFreeze, a.Attempt}, allSources(), message{kind: mFreeze, attempt: a.Attempt})
	case coord.Success:
		if err := m.spout.Success(w.ctx, a.Attempt.TxID); err != nil {
			return fmt.Errorf("success %v: %w", a.Attempt, err)
		}
		w.stats.Committed = a.Attempt.TxID
		for _, n := range append(allSources(), allCounters()...) {
			w.net.send(masterNode, n, message{kind: mSuccess, txid: a.Attempt.TxID})
		}
	}
	return nil
}

func (m *master) commit(a txn.Attempt) {
	m.w.emitTree(tree{mCommit, a}, allCounters(), message{kind: mCommit, attempt: a})
}

// outcome handles the acker's verdict on a tree the master rooted.
func (m *master) outcome(o acker.Outcome) error {
	t, ok := m.trees[o.Root]
	if !ok {
		return nil
	}
	delete(m.trees, o.Root)
	done := o.Status == acker.Completed
	phase := coord.Committing
	if t.kind == mBatch {
		phase = coord.Processing
	}
	switch {
	case !done:
		m.w.stats.FailedTrees++
		if err := m.c.Fail(t.attempt, phase, fmt.Errorf("%w: %s of %v %s", errTree, t.kind, t.attempt, o.Status)); err != nil {
			return err
		}
	case t.kind == mFreeze:
		m.commit(t.attempt)
	default:
		m.c.Ack(t.attempt, phase)
	}
	return m.run()
}

// tick passes one tick of time for the coordinator.
func (m *master) tick() error {
	if err := m.c.Tick(); err != nil {
		return err
	}
	return m.run()
}
