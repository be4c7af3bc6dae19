package plan

import (
	"fmt"
	"strings"
)

// Print renders a plan as text, for tests and for reading a plan (see
// docs/trident.md, "Reading a plan"). It only reads the plan. Each stage,
// one per generated bolt (or source), prints as
//
//	stage NAME parallelism=N [source] [committer] [late] [load=cpu=C%,memory=MMB]
//	  in STREAM from STAGE to nID ROUTE [side=N]
//	  nID KIND [details] [FIELDS] [-> STREAM]
//
// with one "in" line per data stream the stage receives (ROUTE is its
// grouping) and one line per node, in the order the stage runs them.
// FIELDS are the node's output fields; "-> STREAM" names the stream that
// carries the node's output to other stages. The load (per task) is
// printed only when the stage declares one.
func Print(p *Plan) string {
	var b strings.Builder
	for _, s := range p.Stages {
		fmt.Fprintf(&b, "stage %s parallelism=%d", s.Name, s.Parallelism)
		for _, flag := range []struct {
			on   bool
			name string
		}{{s.IsSource(), "source"}, {s.Committer, "committer"}, {s.Late, "late"}} {
			if flag.on {
				b.WriteString(" " + flag.name)
			}
		}
		if !s.Load.IsZero() {
			b.WriteString(" load=" + s.Load.String())
		}
		b.WriteByte('\n')
		for _, in := range s.Inputs {
			fmt.Fprintf(&b, "  in %s from %s to %s %s", in.Stream(), in.Up.Name, in.Entry, in.Route())
			if in.Entry.Kind == Join {
				fmt.Fprintf(&b, " side=%d", in.Side)
			}
			b.WriteByte('\n')
		}
		for _, n := range s.Nodes {
			b.WriteString("  " + n.String() + " " + describe(n))
			fmt.Fprintf(&b, " [%s]", strings.Join(n.Fields, " "))
			if stream := p.fanouts[n.ID].Stream; stream != "" {
				b.WriteString(" -> " + stream)
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// describe is a node's name and the details that decide where it runs
// and what it reads.
func describe(n *Node) string {
	d := n.Name
	if n.In != nil {
		d += " in=[" + strings.Join(n.In, " ") + "]"
	}
	switch n.Kind {
	case Source:
		d += fmt.Sprintf(" %q", n.Stream)
	case Partition:
		d += " " + n.route(0).String()
	case Merge:
		for _, up := range n.Parents {
			d += " " + up.String()
		}
	case Query:
		if n.State != nil {
			d += " state=" + n.State.String()
		} else {
			d += " state=static"
		}
	case Join:
		d += fmt.Sprintf(" left=%s[%s] right=%s[%s]", n.Parents[0], strings.Join(n.Keys[0], " "),
			n.Parents[1], strings.Join(n.Keys[1], " "))
	}
	return d
}
