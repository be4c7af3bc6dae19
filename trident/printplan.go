package trident

import (
	"fmt"
	"strconv"
	"strings"
)

// printPlan renders a plan as text, for tests and for reading a plan (see
// docs/trident.md, "Reading a plan"). It only reads the plan.
// Each group, one per generated bolt (or spout group), prints as
//
//	group NAME parallelism=N [source] [committer] [late]
//	  in STREAM from GROUP to nID ROUTE [side=N]
//	  nID KIND [details] [FIELDS] [-> STREAM]
//
// with one "in" line per data stream the group receives (ROUTE is its
// grouping) and one line per node, in the order the group runs them.
// FIELDS are the node's output fields; "-> STREAM" names the stream that
// carries the node's output to other groups.
func printPlan(p *plan) string {
	var b strings.Builder
	for _, g := range p.groups {
		fmt.Fprintf(&b, "group %s parallelism=%d", g.name, g.parallelism)
		for _, flag := range []struct {
			on   bool
			name string
		}{{g.isSource(), "source"}, {g.committer, "committer"}, {g.late, "late"}} {
			if flag.on {
				b.WriteString(" " + flag.name)
			}
		}
		b.WriteByte('\n')
		for _, in := range g.inputs {
			fmt.Fprintf(&b, "  in %s from %s to %s %s", in.stream(), in.up.name, nodeName(in.entry), in.entry.route(in.side))
			if _, ok := in.entry.op.(*joinOp); ok {
				fmt.Fprintf(&b, " side=%d", in.side)
			}
			b.WriteByte('\n')
		}
		for _, n := range g.nodes {
			b.WriteString("  " + nodeName(n) + " " + describeNode(n))
			fmt.Fprintf(&b, " [%s]", strings.Join(n.sch.fields, " "))
			if stream := p.fanouts[n.id].stream; stream != "" {
				b.WriteString(" -> " + stream)
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func nodeName(n *node) string { return "n" + strconv.Itoa(n.id) }

// describeNode is a node's kind and the details that decide where it
// runs and what it reads.
func describeNode(n *node) string {
	ins := func(sch *schema) string { return " in=[" + strings.Join(sch.fields, " ") + "]" }
	k := n.op.kind()
	switch op := n.op.(type) {
	case *sourceOp:
		return fmt.Sprintf("%s %q", k, op.src.id)
	case *eachOp:
		return k + ins(op.inSch)
	case *partitionOp:
		return k + " " + n.route(0).String()
	case *persistOp:
		return k + ins(op.inSch)
	case *mergeOp:
		parents := make([]string, 0, 1+len(n.others))
		for _, p := range n.inputs() {
			parents = append(parents, nodeName(p))
		}
		return k + " " + strings.Join(parents, " ")
	case *queryOp:
		if op.state != nil {
			return k + ins(op.inSch) + " state=" + nodeName(op.state)
		}
		return k + ins(op.inSch) + " state=static"
	case *joinOp:
		return fmt.Sprintf("%s left=%s[%s] right=%s[%s]", k, nodeName(n.parent), strings.Join(op.keys[0], " "),
			nodeName(n.others[0]), strings.Join(op.keys[1], " "))
	}
	return k
}
