package trident

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/squallstream/squall/trident/internal/plan"
)

// Counters of the persistent states a topology writes, kept per
// submission and shared by the state's tasks.

// StateStats are one persistent state's counters since submission, summed
// over its partitions (tasks) in this process.
type StateStats struct {
	// Name names the state: "persist-N", N the id of the node that writes
	// it (PersistentAggregate, PersistentReduce or PartitionPersist), in
	// declaration order.
	Name string
	// Component is the generated bolt whose tasks write it (a group of
	// the plan, as in Running.Stats and Running.Graph).
	Component string
	// Reads and Writes count the keys that batches' commits updated
	// (read, then wrote) in a map state (PersistentAggregate,
	// PersistentReduce); a PartitionPersist's updater calls the state
	// itself, so its reads and writes are not counted.
	Reads, Writes uint64
	// Errors counts batches' commits on the state that failed (BeginCommit,
	// the update or Commit returned an error), fenced writes included.
	Errors uint64
}

// stateCounts are one state's live counters.
type stateCounts struct {
	name, component       string
	reads, writes, errors atomic.Uint64
}

// stateMetrics are the counters of every persistent state of a
// submission, fixed when it is generated.
type stateMetrics struct {
	byNode map[*node]*stateCounts
}

func newStateMetrics(p *plan.Plan) *stateMetrics {
	m := &stateMetrics{byNode: map[*node]*stateCounts{}}
	for _, s := range p.Stages {
		for _, pn := range s.Nodes {
			n := nodeOf(pn)
			if _, ok := n.op.(*persistOp); ok {
				m.byNode[n] = &stateCounts{name: fmt.Sprintf("persist-%d", n.id), component: s.Name}
			}
		}
	}
	return m
}

// of returns n's counters (nil-safe: a stage task built without them
// counts nothing).
func (m *stateMetrics) of(n *node) *stateCounts {
	if m == nil {
		return nil
	}
	return m.byNode[n]
}

// committed counts a commit of acc on the state: its keys on success, an
// error otherwise.
func (c *stateCounts) committed(acc batchAcc, err error) {
	if c == nil {
		return
	}
	if err != nil {
		c.errors.Add(1)
		return
	}
	if k, ok := acc.(keyCounter); ok {
		if n := uint64(k.keyCount()); n > 0 {
			c.reads.Add(n)
			c.writes.Add(n)
		}
	}
}

// keyCounter is a batch accumulator of map state: the number of keys its
// commit updates.
type keyCounter interface {
	keyCount() int
}

func (a *accOf[V]) keyCount() int    { return len(a.groups.order) }
func (b *reduceBatch) keyCount() int { return len(b.groups.order) }

// States returns the counters of the persistent states the topology
// writes, sorted by name.
func (r *Running) States() []StateStats {
	out := make([]StateStats, 0, len(r.states.byNode))
	for _, c := range r.states.byNode {
		out = append(out, StateStats{Name: c.name, Component: c.component,
			Reads: c.reads.Load(), Writes: c.writes.Load(), Errors: c.errors.Load()})
	}
	slices.SortFunc(out, func(a, b StateStats) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// FencingRejections returns the number of writes of this submission that
// were rejected because a newer owner generation of the topology had
// written (state.ErrFenced): state opens and commits, and the
// coordinator's store writes. The first halts the topology (Err matches
// ErrSuperseded); tasks still writing may add more.
func (r *Running) FencingRejections() uint64 { return r.status.FencingRejections() }
