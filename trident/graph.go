package trident

import (
	"github.com/squallstream/squall/trident/internal/exec"
	"github.com/squallstream/squall/trident/internal/plan"
)

// graph describes the declared nodes to the planner: one plan.Node per
// node, with the node itself as the opaque payload. It returns new plan
// nodes on every call and does not change the declared ones.
func (t *Topology) graph() []*plan.Node {
	g := make([]*plan.Node, len(t.nodes))
	for i, n := range t.nodes {
		g[i] = &plan.Node{ID: n.id, Kind: plan.Op, Name: n.op.Kind(), Fields: n.sch.fields, Hint: n.hint, Label: n.label,
			Load: plan.Load{CPU: n.load.CPU, MemoryMB: n.load.MemoryMB}, Payload: n.op}
		for _, p := range n.inputs() {
			g[i].Parents = append(g[i].Parents, g[p.id])
		}
		describe(g[i], n, g)
	}
	return g
}

// describe fills in what the planner needs to know of n's operation.
func describe(pn *plan.Node, n *node, g []*plan.Node) {
	switch op := n.op.(type) {
	case *exec.Source:
		pn.Kind, pn.Stream, pn.Hint = plan.Source, n.src.id, n.src.parallelism
	case *exec.Each:
		pn.In = inFields(op.In)
	case *exec.Partition:
		pn.Kind, pn.Route = plan.Partition, plan.Route{How: op.How, Fields: op.Fields}
	case *exec.Merge:
		pn.Kind = plan.Merge
	case *exec.Join:
		pn.Kind, pn.Keys = plan.Join, op.Keys
	case *exec.Persist:
		pn.Kind, pn.In = plan.Persist, inFields(op.In)
	case *exec.Query:
		pn.Kind, pn.In, pn.ByKeys = plan.Query, inFields(op.In), op.ByKeys
		pn.AllPartitions = op.Q.EveryPartition()
		if op.State >= 0 && op.State < len(g) {
			pn.State = g[op.State]
		}
	}
}

// inFields returns the fields of an operation's input, never nil (the
// printed plan shows them).
func inFields(fields []string) []string {
	if fields == nil {
		return []string{}
	}
	return fields
}

// plan plans the declared nodes.
func (t *Topology) plan() *plan.Plan { return plan.New(t.graph()) }
