package plan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Plan is the result of planning a graph: its stages, the stage each node
// runs in and where each node's tuples go. Everything the planner decides
// lives here, none of it on the nodes.
type Plan struct {
	Stages  []*Stage // upstream stages come first
	stageOf []*Stage // by node id; nil for a node that is not planned
	fanouts []Fanout // by node id
}

// Stage is the operations that run in one component of the generated
// topology: everything between a source or a repartition and the next
// repartitions.
type Stage struct {
	Name        string
	Nodes       []*Node // in declaration order, so parents come first
	Entry       *Node   // the source, partition, merge or join node it starts at
	Parallelism int
	Committer   bool     // it holds a Persist node: it writes state in the commit phase
	Late        bool     // it reports batches only in the commit phase (see reportsLate)
	Inputs      []Input  // the data streams it receives
	Upstream    []*Stage // stages that send it data, each once
	Downstream  []*Stage // stages it sends data to, each once
	SourceIndex int      // for a source stage: the index of its source among the graph's sources
	// Load is what each task of the stage needs: the sum of its nodes'
	// Loads, as Storm sums the resources of the operations it combines
	// into one bolt. The stage needs Parallelism times as much.
	Load Load
}

// Input is one data stream a stage receives: the output of node From (in
// stage Up), delivered to node Entry of the stage. Side tells a join
// which of its inputs this is.
type Input struct {
	From  *Node
	Up    *Stage
	Entry *Node
	Side  int
}

// Stream returns the topology stream of the input.
func (in Input) Stream() string { return DataStream(in.From) }

// Route returns how the input's tuples are spread over the stage's tasks.
func (in Input) Route() Route { return in.Entry.route(in.Side) }

// Fanout is where a node's tuples go: the children that run in its stage,
// and the topology stream to other stages ("" if none). The plan
// computes it once, so that a task routes a tuple with a slice index, not
// map lookups.
type Fanout struct {
	Local  []*Node
	Stream string
}

// DataStream names the topology stream that carries n's output to other
// stages.
func DataStream(n *Node) string { return "s" + strconv.Itoa(n.ID) }

// IsSource reports whether the stage starts at a source.
func (s *Stage) IsSource() bool { return s.Entry.Kind == Source }

func (s *Stage) String() string { return fmt.Sprintf("%s(%d nodes)", s.Name, len(s.Nodes)) }

// StageOf returns the stage n runs in, or nil if n is not planned (a
// repartition nothing reads).
func (p *Plan) StageOf(n *Node) *Stage { return p.stageOf[n.ID] }

// Fanout returns where n's tuples go.
func (p *Plan) Fanout(n *Node) *Fanout { return &p.fanouts[n.ID] }

// New plans graph, whose nodes are numbered in declaration order (see
// Node). It only reads the nodes.
func New(graph []*Node) *Plan {
	p := &Plan{stageOf: make([]*Stage, len(graph)), fanouts: make([]Fanout, len(graph))}
	children := make([][]*Node, len(graph))
	sources := 0
	for _, n := range graph {
		for _, up := range n.Parents {
			children[up.ID] = append(children[up.ID], n)
		}
	}
	newStage := func(entry *Node, name string) *Stage {
		s := &Stage{Name: name, Entry: entry, Parallelism: 1}
		p.Stages = append(p.Stages, s)
		return s
	}
	for _, n := range graph {
		var s *Stage
		switch n.Kind {
		case Source:
			s = newStage(n, "spout-"+n.Stream)
			s.SourceIndex = sources
			sources++
			s.Parallelism = max(n.Hint, 1)
		case Partition, Merge, Join:
			if n.Kind == Partition && len(children[n.ID]) == 0 {
				continue // a repartition nothing reads (a GroupBy whose aggregation moved in front of a new one)
			}
			if n.Kind == Partition && queriesOnly(children[n.ID]) {
				// A Broadcast read only by queries of written state: it
				// runs in its parent's stage, passing tuples on to its own
				// data stream, which its queries receive broadcast. (As a
				// stage of its own it would copy each tuple once per task
				// of that stage before the queries copy it again.) It has
				// no tasks of its own: its hint is ignored.
				s = p.stageOf[n.Parents[0].ID]
				p.stageOf[n.ID] = s
				s.Nodes = append(s.Nodes, n)
				continue
			}
			s = newStage(n, "b-"+strconv.Itoa(len(p.Stages)))
			for side, in := range n.Parents {
				s.connect(p.stageOf[in.ID], in, n, side)
			}
		case Query:
			s = p.stageOf[n.Parents[0].ID]
			if n.State != nil {
				s = p.stageOf[n.State.ID]
				if up := p.stageOf[n.Parents[0].ID]; up != s {
					s.connect(up, n.Parents[0], n, 0)
				}
			}
		default:
			s = p.stageOf[n.Parents[0].ID]
		}
		p.stageOf[n.ID] = s
		s.Nodes = append(s.Nodes, n)
		if n.Kind == Persist {
			s.Committer = true
		}
		s.Load = s.Load.Add(n.Load)
		if n.Kind != Source && n.Hint > 0 {
			s.Parallelism = max(s.Parallelism, n.Hint)
		}
	}
	for _, s := range p.Stages { // upstream stages come first
		s.Late = s.reportsLate()
		s.label()
	}
	for _, n := range graph {
		o := &p.fanouts[n.ID]
		for _, c := range children[n.ID] {
			switch s := p.stageOf[c.ID]; {
			case s == nil: // not planned: a repartition nothing reads
			case s == p.stageOf[n.ID]:
				o.Local = append(o.Local, c)
			default:
				o.Stream = DataStream(n)
			}
		}
	}
	return p
}

// queriesOnly reports whether every node of children (at least one) is a
// query that absorbs its Broadcast parent (see Node.absorbs).
func queriesOnly(children []*Node) bool {
	return len(children) > 0 && !slices.ContainsFunc(children, func(c *Node) bool { return !c.absorbs() })
}

// connect records that s receives from's output at entry; up is the
// stage from runs in.
func (s *Stage) connect(up *Stage, from, entry *Node, side int) {
	s.Inputs = append(s.Inputs, Input{From: from, Up: up, Entry: entry, Side: side})
	if !slices.Contains(s.Upstream, up) {
		s.Upstream = append(s.Upstream, up)
	}
	if !slices.Contains(up.Downstream, s) {
		up.Downstream = append(up.Downstream, s)
	}
}

// reportsLate tells whether s reports its batches downstream only in the
// commit phase: a committer finishes a batch when it commits it, and a
// stage fed by such a stage (say through a NewValuesStream) cannot finish
// before that stage has reported.
func (s *Stage) reportsLate() bool {
	if s.Committer {
		return true
	}
	return slices.ContainsFunc(s.Upstream, func(up *Stage) bool { return up.Late })
}

// label appends the distinct labels of a bolt stage's nodes, in order, to
// its name: "b-2" with a node labelled "counts" becomes "b-2-counts".
// Source stages keep their names ("spout-" and the stream id).
func (s *Stage) label() {
	if s.Entry.Kind == Source {
		return
	}
	var labels []string
	for _, n := range s.Nodes {
		if n.Label != "" && !slices.Contains(labels, n.Label) {
			labels = append(labels, n.Label)
		}
	}
	if len(labels) > 0 {
		s.Name += "-" + strings.Join(labels, "-")
	}
}

// SoleTask returns the one task (an index among numTasks) that receives
// every tuple of batch txid, and true, when every input of the stage
// sends a batch to one task: Global (the first task) or BatchGlobal (the
// task txid selects). The other tasks get no tuple of the batch, so, as in
// Storm, they must not emit an aggregation of nothing for it. It returns
// false for a source stage and for a stage any input of which spreads a
// batch over several tasks.
func (s *Stage) SoleTask(txid uint64, numTasks int) (int, bool) {
	if len(s.Inputs) == 0 || numTasks < 1 {
		return 0, false
	}
	sole := -1
	for _, in := range s.Inputs {
		var task int
		switch in.Route().How {
		case Global:
			task = 0
		case BatchGlobal:
			task = int(txid % uint64(numTasks))
		default:
			return 0, false
		}
		if sole >= 0 && sole != task {
			return 0, false
		}
		sole = task
	}
	return sole, true
}
