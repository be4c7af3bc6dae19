package trident

import "github.com/squallstream/squall/trident/internal/plan"

// graph describes the declared nodes to the planner: one plan.Node per
// node, with the node itself as the opaque payload. It returns new plan
// nodes on every call and does not change the declared ones.
func (t *Topology) graph() []*plan.Node {
	g := make([]*plan.Node, len(t.nodes))
	for i, n := range t.nodes {
		g[i] = &plan.Node{ID: n.id, Kind: plan.Op, Name: n.op.kind(), Fields: n.sch.fields, Hint: n.hint, Label: n.label,
			Load: plan.Load{CPU: n.load.CPU, MemoryMB: n.load.MemoryMB}, Payload: n}
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
	case *sourceOp:
		pn.Kind, pn.Stream, pn.Hint = plan.Source, op.src.id, op.src.parallelism
	case *eachOp:
		pn.In = inFields(op.inSch)
	case *partitionOp:
		pn.Kind, pn.Route = plan.Partition, plan.Route{How: op.how, Fields: op.fields}
	case *mergeOp:
		pn.Kind = plan.Merge
	case *joinOp:
		pn.Kind, pn.Keys = plan.Join, [2][]string{op.keys[0], op.keys[1]}
	case *persistOp:
		pn.Kind, pn.In = plan.Persist, inFields(op.inSch)
	case *queryOp:
		pn.Kind, pn.In, pn.ByKeys = plan.Query, inFields(op.inSch), op.byKeys
		pn.AllPartitions = op.q.everyPartition()
		if op.state != nil && op.state.id < len(g) {
			pn.State = g[op.state.id]
		}
	}
}

// inFields returns the fields of an operation's input, never nil (the
// printed plan shows them).
func inFields(s *schema) []string {
	if s.fields == nil {
		return []string{}
	}
	return s.fields
}

// plan plans the declared nodes.
func (t *Topology) plan() *plan.Plan { return plan.New(t.graph()) }
