package trident

import (
	"fmt"
	"slices"
	"strconv"
)

// group is the operations that run in one bolt: everything between a
// source or a repartition and the next repartitions. It becomes one
// component of the generated topology.
type group struct {
	name        string
	nodes       []*node // in declaration order, so parents come first
	entry       *node   // the source or partition node the group starts at
	parallelism int
	committer   bool     // it holds a persistent aggregation
	late        bool     // it reports batches in the commit phase (see reportsLate)
	inputs      []input  // the data streams it receives
	upstream    []*group // groups that send it data, each once
	downstream  []*group // groups it sends data to, each once
	sourceIndex int      // for source groups: index among the sources
}

// input is one data stream a group receives: the output of node from (in
// another group), delivered to node entry of this group. side tells a
// join which of its inputs this is.
type input struct {
	from  *node
	entry *node
	side  int
}

// stream returns the topology stream of the input.
func (in input) stream() string { return dataStream(in.from) }

// connect records that g receives from's output at entry.
func (g *group) connect(from, entry *node, side int) {
	g.inputs = append(g.inputs, input{from: from, entry: entry, side: side})
	up := from.group
	if !slices.Contains(g.upstream, up) {
		g.upstream = append(g.upstream, up)
	}
	if !slices.Contains(up.downstream, g) {
		up.downstream = append(up.downstream, g)
	}
}

// masterComponent is the id of the master coordinator spout.
const masterComponent = "$master"

// Streams of the generated topology.
const (
	streamBatch   = "$batch"   // master -> source groups: a batch to emit
	streamFreeze  = "$freeze"  // master -> source groups: freeze a batch before commit
	streamCommit  = "$commit"  // master -> committer groups: write a batch
	streamSuccess = "$success" // master -> all groups: a batch committed
	streamCoord   = "$coord"   // group -> downstream tasks: tuples sent for a batch
	fieldBatch    = "$batch"   // field 0 of every data tuple: the batch attempt
)

// dataStream names the topology stream that carries n's output to other
// groups.
func dataStream(n *node) string { return "s" + strconv.Itoa(n.id) }

func (g *group) isSource() bool {
	_, ok := g.entry.op.(*sourceOp)
	return ok
}

// plan splits the declared nodes into groups.
func (t *Topology) plan() []*group {
	var groups []*group
	newGroup := func(entry *node, name string) *group {
		g := &group{name: name, entry: entry, parallelism: 1}
		groups = append(groups, g)
		return g
	}
	for _, n := range t.nodes {
		switch op := n.op.(type) {
		case *sourceOp:
			n.group = newGroup(n, "spout-"+op.src.id)
			n.group.sourceIndex = len(t.sources) - 1
			for i, s := range t.sources {
				if s == n {
					n.group.sourceIndex = i
				}
			}
			n.group.parallelism = max(op.src.parallelism, 1)
		case *partitionOp, *mergeOp, *joinOp:
			if _, ok := op.(*partitionOp); ok && len(n.children) == 0 {
				continue // a repartition nothing reads (a GroupBy whose aggregation moved in front of a new one)
			}
			n.group = newGroup(n, "b-"+strconv.Itoa(len(groups)))
			for side, p := range n.inputs() {
				n.group.connect(p, n, side)
			}
		case *queryOp:
			n.group = n.parent.group
			if op.state != nil {
				n.group = op.state.group
				if n.parent.group != n.group {
					n.group.connect(n.parent, n, 0)
				}
			}
		default:
			n.group = n.parent.group
		}
		g := n.group
		g.nodes = append(g.nodes, n)
		if _, ok := n.op.(*persistOp); ok {
			g.committer = true
		}
		if _, ok := n.op.(*sourceOp); !ok && n.hint > 0 {
			g.parallelism = max(g.parallelism, n.hint)
		}
	}
	for _, g := range groups { // upstream groups come first
		g.late = g.reportsLate()
	}
	for _, n := range t.nodes {
		n.out = ""
		if crossesGroups(n) {
			n.out = dataStream(n)
		}
	}
	return groups
}

// reportsLate tells whether g reports its batches downstream only in the
// commit phase: a committer finishes a batch when it commits it, and a
// group fed by such a group (say through a NewValuesStream) cannot finish
// before that group has reported.
func (g *group) reportsLate() bool {
	if g.committer {
		return true
	}
	return slices.ContainsFunc(g.upstream, func(up *group) bool { return up.late })
}

// crossesGroups reports whether n sends tuples to a node of another group.
func crossesGroups(n *node) bool {
	for _, c := range n.children {
		if c.group != nil && c.group != n.group {
			return true
		}
	}
	return false
}

func (g *group) String() string { return fmt.Sprintf("%s(%d nodes)", g.name, len(g.nodes)) }
