package topology

import (
	"slices"
	"strings"
)

// Graph describes a topology's components and the streams between them,
// for display: what a monitor draws. The acker tasks are not part of it.
type Graph struct {
	Components []GraphComponent // in task order, as Components
	Edges      []Edge           // sorted by From, Stream, To
}

// GraphComponent is one component of a Graph.
type GraphComponent struct {
	ID          string
	Spout       bool
	Parallelism int // executors
	Tasks       int
}

// Edge is a bolt's subscription to a stream of another component.
type Edge struct {
	From     string // the emitting component
	Stream   string
	To       string // the subscribing bolt
	Grouping string // as Grouping.String: "shuffle", "fields[word]", ...
}

// Graph returns the topology's components and streams.
func (t *Topology) Graph() Graph {
	g := Graph{Components: make([]GraphComponent, 0, len(t.components))}
	for _, c := range t.components {
		g.Components = append(g.Components, GraphComponent{ID: c.id, Spout: c.spout, Parallelism: c.parallelism, Tasks: c.tasks})
		for _, in := range c.inputs {
			g.Edges = append(g.Edges, Edge{From: in.from, Stream: in.stream, To: c.id, Grouping: in.grouping.String()})
		}
	}
	slices.SortFunc(g.Edges, func(a, b Edge) int {
		if c := strings.Compare(a.From, b.From); c != 0 {
			return c
		}
		if c := strings.Compare(a.Stream, b.Stream); c != 0 {
			return c
		}
		return strings.Compare(a.To, b.To)
	})
	return g
}

// Graph returns the running topology's components and streams.
func (r *Running) Graph() Graph { return r.plan.topo.Graph() }
