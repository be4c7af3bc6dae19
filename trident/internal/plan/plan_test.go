package plan

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/plans with the printed plans")

// graph builds a graph for a test, in declaration order.
type graph struct{ nodes []*Node }

func (g *graph) add(n Node, parents ...*Node) *Node {
	n.ID, n.Parents = len(g.nodes), parents
	g.nodes = append(g.nodes, &n)
	return &n
}

func (g *graph) source(stream string, fields ...string) *Node {
	return g.add(Node{Kind: Source, Name: "source", Stream: stream, Hint: 1, Fields: fields})
}

func (g *graph) op(name string, parent *Node, fields ...string) *Node {
	return g.add(Node{Kind: Op, Name: name, Fields: fields}, parent)
}

func (g *graph) partition(parent *Node, how Partitioning, by ...string) *Node {
	return g.add(Node{Kind: Partition, Name: "partition", Route: Route{How: how, Fields: by}, Fields: parent.Fields}, parent)
}

func (g *graph) persist(parent *Node, in []string, fields ...string) *Node {
	return g.add(Node{Kind: Persist, Name: "persist", In: in, Fields: fields}, parent)
}

func hint(n *Node, h int) *Node { n.Hint = h; return n }

// Graphs is what the API layer declares for the topologies of the same
// names in package trident's plan tests (which check that it does):
// grouped persistent aggregations already carry their pre-aggregation.
var graphs = map[string]func(g *graph){
	"wordcount": func(g *graph) {
		words := hint(g.add(Node{Kind: Op, Name: "each", In: []string{"sentence"}, Fields: []string{"sentence", "word"}}, g.source("s", "sentence")), 2)
		hint(g.partition(words, ByFields, "word"), 3) // the GroupBy, read by nothing
		pre := g.op("aggregate", words, "word", "$partial3")
		g.persist(hint(g.partition(pre, ByFields, "word"), 3), []string{"$partial3"}, "word", "count")
	},
	"merge": func(g *graph) {
		a := g.op("flatMap", g.source("a", "sentence"), "word")
		b := hint(g.op("flatMap", g.source("b", "sentence"), "word"), 2)
		m := g.add(Node{Kind: Merge, Name: "merge", Fields: a.Fields}, a, b)
		g.op("peek", hint(g.op("filter", m, "word"), 4), "word")
	},
	"join": func(g *graph) {
		o := g.source("orders", "order", "amount")
		s := g.source("statuses", "id", "status")
		j := g.add(Node{Kind: Join, Name: "join", Keys: [2][]string{{"order"}, {"id"}}, Fields: []string{"order", "amount", "status"}, Hint: 2}, o, s)
		g.op("project", j, "order", "status")
	},
	"statequery": func(g *graph) {
		words := g.op("flatMap", g.source("s", "sentence"), "word")
		hint(g.partition(words, ByFields, "word"), 2)
		pre := g.op("aggregate", words, "word", "$partial3")
		counts := g.persist(hint(g.partition(pre, ByFields, "word"), 2), []string{"$partial3"}, "word", "count")
		q := g.add(Node{Kind: Query, Name: "query", In: []string{"word"}, State: counts, ByKeys: true, Fields: []string{"word", "count"}}, g.source("q", "word"))
		g.op("peek", q, "word", "count")
	},
	"chainpersist": func(g *graph) {
		words := g.op("flatMap", g.source("s", "sentence"), "word")
		firsts := g.persist(hint(g.partition(words, ByFields, "word"), 2), []string{"word"}, "word")
		m := g.add(Node{Kind: Merge, Name: "merge", Fields: words.Fields}, words, firsts)
		hint(g.partition(m, ByFields, "word"), 2)
		pre := g.op("aggregate", m, "word", "$partial6")
		counts := g.persist(hint(g.partition(pre, ByFields, "word"), 2), []string{"$partial6"}, "word", "count")
		g.op("peek", counts, "word", "count")
	},
	"global": func(g *graph) {
		words := hint(g.op("flatMap", g.source("s", "sentence"), "word"), 2)
		g.persist(g.partition(words, Global), []string{"word"}, "total")
		g.op("aggregate", g.partition(words, Global), "n")
		g.op("aggregate", g.partition(words, BatchGlobal), "line")
	},
	"partitionpersist": func(g *graph) {
		words := g.op("flatMap", g.source("s", "sentence"), "word")
		g.persist(hint(g.partition(words, Shuffle), 3), []string{"word"}, "word")
	},
}

func build(name string) []*Node {
	g := &graph{}
	graphs[name](g)
	return g.nodes
}

// TestPrintedPlans compares the printed plan of each of graphs with
// testdata/plans/NAME.txt; go test -run TestPrintedPlans -update rewrites
// the files.
func TestPrintedPlans(t *testing.T) {
	for name := range graphs {
		t.Run(name, func(t *testing.T) {
			got := Print(New(build(name)))
			path := filepath.Join("testdata", "plans", name+".txt")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("plan of %s differs from %s\n got:\n%s\nwant:\n%s", name, path, got, want)
			}
		})
	}
}

// snapshot prints every field of the nodes (pointers as addresses), so
// that a change to any of them shows against a later snapshot.
func snapshot(nodes []*Node) []string {
	snaps := make([]string, len(nodes))
	for i, n := range nodes {
		snaps[i] = fmt.Sprintf("%+v", *n)
	}
	return snaps
}

// TestPlanIsPure plans each graph twice: both plans print the same,
// share no stages, and leave the nodes as they were.
func TestPlanIsPure(t *testing.T) {
	for name := range graphs {
		t.Run(name, func(t *testing.T) {
			nodes := build(name)
			before := snapshot(nodes)
			first := New(nodes)
			if after := snapshot(nodes); !slices.Equal(before, after) {
				t.Fatalf("planning changed the nodes:\nbefore %v\nafter  %v", before, after)
			}
			second := New(nodes)
			if after := snapshot(nodes); !slices.Equal(before, after) {
				t.Fatalf("planning again changed the nodes:\nbefore %v\nafter  %v", before, after)
			}
			if a, b := Print(first), Print(second); a != b {
				t.Fatalf("planning twice printed differently:\nfirst:\n%s\nsecond:\n%s", a, b)
			}
			for _, s := range first.Stages {
				if slices.Contains(second.Stages, s) {
					t.Fatalf("stage %s is shared by both plans", s.Name)
				}
			}
		})
	}
}

// TestUnreadRepartitionIsNotPlanned: a repartition without children has
// no stage, and its parent's fanout ignores it.
func TestUnreadRepartitionIsNotPlanned(t *testing.T) {
	nodes := build("wordcount")
	p := New(nodes)
	if p.StageOf(nodes[2]) != nil {
		t.Fatalf("the GroupBy's repartition runs in %v", p.StageOf(nodes[2]))
	}
	if f := p.Fanout(nodes[1]); len(f.Local) != 1 || f.Local[0] != nodes[3] || f.Stream != "" {
		t.Fatalf("fanout of n1 = %+v; want only n3, locally", f)
	}
}
