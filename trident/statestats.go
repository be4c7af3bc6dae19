package trident

import (
	"slices"
	"strings"
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

// KeyCount is the number of keys the batch's commit updates
// (exec.KeyCounter).
func (a *accOf[V]) KeyCount() int    { return len(a.groups.Order) }
func (b *reduceBatch) KeyCount() int { return len(b.groups.Order) }

// States returns the counters of the persistent states the topology
// writes, sorted by name.
func (r *Running) States() []StateStats {
	counts := r.states.All()
	out := make([]StateStats, 0, len(counts))
	for _, c := range counts {
		out = append(out, StateStats{Name: c.Name, Component: c.Component, Reads: c.Reads, Writes: c.Writes, Errors: c.Errors})
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
