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
// group up), delivered to node entry of this group. side tells a join
// which of its inputs this is.
type input struct {
	from  *node
	up    *group
	entry *node
	side  int
}

// stream returns the topology stream of the input.
func (in input) stream() string { return dataStream(in.from) }

// connect records that g receives from's output at entry; up is the
// group from runs in.
func (g *group) connect(up *group, from, entry *node, side int) {
	g.inputs = append(g.inputs, input{from: from, up: up, entry: entry, side: side})
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

// plan is the result of planning a topology: its groups and where each
// declared node runs. Planning only reads the declared nodes; everything
// it decides lives here.
type plan struct {
	groups  []*group         // upstream groups come first
	groupOf map[*node]*group // the group each planned node runs in
	fanouts []fanout         // by node id: where a node's tuples go
}

// fanout is where a node's tuples go: the children that run in its group,
// and the topology stream to other groups ("" if none). The plan computes
// it once, so that a bolt routes a tuple with a slice index, not map
// lookups.
type fanout struct {
	local  []*node
	stream string
}

// plan splits the declared nodes into groups. It does not change the
// nodes, so it can be called any number of times.
func (t *Topology) plan() *plan {
	p := &plan{groupOf: map[*node]*group{}}
	newGroup := func(entry *node, name string) *group {
		g := &group{name: name, entry: entry, parallelism: 1}
		p.groups = append(p.groups, g)
		return g
	}
	for _, n := range t.nodes {
		var g *group
		switch op := n.op.(type) {
		case *sourceOp:
			g = newGroup(n, "spout-"+op.src.id)
			g.sourceIndex = len(t.sources) - 1
			for i, s := range t.sources {
				if s == n {
					g.sourceIndex = i
				}
			}
			g.parallelism = max(op.src.parallelism, 1)
		case *partitionOp, *mergeOp, *joinOp:
			if _, ok := op.(*partitionOp); ok && len(n.children) == 0 {
				continue // a repartition nothing reads (a GroupBy whose aggregation moved in front of a new one)
			}
			g = newGroup(n, "b-"+strconv.Itoa(len(p.groups)))
			for side, in := range n.inputs() {
				g.connect(p.groupOf[in], in, n, side)
			}
		case *queryOp:
			g = p.groupOf[n.parent]
			if op.state != nil {
				g = p.groupOf[op.state]
				if up := p.groupOf[n.parent]; up != g {
					g.connect(up, n.parent, n, 0)
				}
			}
		default:
			g = p.groupOf[n.parent]
		}
		p.groupOf[n] = g
		g.nodes = append(g.nodes, n)
		if _, ok := n.op.(*persistOp); ok {
			g.committer = true
		}
		if _, ok := n.op.(*sourceOp); !ok && n.hint > 0 {
			g.parallelism = max(g.parallelism, n.hint)
		}
	}
	for _, g := range p.groups { // upstream groups come first
		g.late = g.reportsLate()
	}
	p.fanouts = make([]fanout, len(t.nodes))
	for _, n := range t.nodes {
		o := &p.fanouts[n.id]
		for _, c := range n.children {
			switch g, ok := p.groupOf[c]; {
			case !ok: // not planned: a repartition nothing reads
			case g == p.groupOf[n]:
				o.local = append(o.local, c)
			default:
				o.stream = dataStream(n)
			}
		}
	}
	return p
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

func (g *group) String() string { return fmt.Sprintf("%s(%d nodes)", g.name, len(g.nodes)) }
