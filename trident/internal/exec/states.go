package exec

import (
	"fmt"
	"sync/atomic"

	"github.com/squallstream/squall/trident/internal/plan"
)

// States are the counters of every persistent state of a submission,
// fixed when it is generated and shared by the states' tasks.
type States struct {
	byNode map[int]*stateCounts // by node id
}

// StateCount is one persistent state's counters since submission,
// summed over its tasks in this process (trident.StateStats).
type StateCount struct {
	Name, Component       string
	Reads, Writes, Errors uint64
}

// stateCounts are one state's live counters.
type stateCounts struct {
	name, component       string
	reads, writes, errors atomic.Uint64
}

// NewStates returns the counters of the persistent states of p: one per
// Persist node, named "persist-N" for node id N.
func NewStates(p *plan.Plan) *States {
	m := &States{byNode: map[int]*stateCounts{}}
	for _, s := range p.Stages {
		for _, n := range s.Nodes {
			if _, ok := opOf(n).(*Persist); ok {
				m.byNode[n.ID] = &stateCounts{name: fmt.Sprintf("persist-%d", n.ID), component: s.Name}
			}
		}
	}
	return m
}

// All reads every state's counters, in no particular order.
func (m *States) All() []StateCount {
	out := make([]StateCount, 0, len(m.byNode))
	for _, c := range m.byNode {
		out = append(out, StateCount{Name: c.name, Component: c.component,
			Reads: c.reads.Load(), Writes: c.writes.Load(), Errors: c.errors.Load()})
	}
	return out
}

// of returns node id's counters (nil-safe: a processor built without
// them counts nothing).
func (m *States) of(id int) *stateCounts {
	if m == nil {
		return nil
	}
	return m.byNode[id]
}

// committed counts a commit of acc on the state: its keys on success, an
// error otherwise.
func (c *stateCounts) committed(acc BatchAcc, err error) {
	if c == nil {
		return
	}
	if err != nil {
		c.errors.Add(1)
		return
	}
	if k, ok := acc.(KeyCounter); ok {
		if n := uint64(k.KeyCount()); n > 0 {
			c.reads.Add(n)
			c.writes.Add(n)
		}
	}
}
