package topology

import (
	"slices"

	"github.com/squallstream/squall/transport"
)

// Topology is a validated graph of spouts and bolts, ready to run. It is
// immutable and may be submitted any number of times.
type Topology struct {
	components []*component // sorted by id
	byID       map[string]*component
	numTasks   int
	types      *transport.Types // value types beyond the transport's own (Builder.ValueTypes)
}

type component struct {
	id          string
	spout       bool
	newSpout    func() Spout
	newBolt     func() Bolt
	parallelism int
	tasks       int
	outputs     map[string]*schema
	inputs      []input
	taskIDs     []TaskID
}

func (t *Topology) component(id string) *component { return t.byID[id] }

// Components returns the ids of the topology's components in task order.
func (t *Topology) Components() []string {
	ids := make([]string, len(t.components))
	for i, c := range t.components {
		ids[i] = c.id
	}
	return ids
}

func (c *component) streamNames() []string {
	names := make([]string, 0, len(c.outputs))
	for n := range c.outputs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// executorTasks splits the component's tasks into contiguous runs, one per
// executor, as evenly as possible.
func (c *component) executorTasks() [][]TaskID {
	runs := make([][]TaskID, c.parallelism)
	base, extra := c.tasks/c.parallelism, c.tasks%c.parallelism
	next := 0
	for e := range runs {
		n := base
		if e < extra {
			n++
		}
		runs[e] = c.taskIDs[next : next+n]
		next += n
	}
	return runs
}
