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
	"broadcastquery": func(g *graph) {
		words := g.op("flatMap", g.source("s", "sentence"), "word")
		hint(g.partition(words, ByFields, "word"), 6)
		pre := g.op("aggregate", words, "word", "$partial3")
		counts := g.persist(hint(g.partition(pre, ByFields, "word"), 6), []string{"$partial3"}, "word", "count")
		args := g.source("q", "args")
		all := g.add(Node{Kind: Query, Name: "query", In: []string{}, State: counts, ByKeys: true, Fields: []string{"args", "word", "count"}}, g.partition(args, Broadcast))
		g.op("peek", all, "args", "word", "count")
		keyed := g.add(Node{Kind: Query, Name: "query", In: []string{"args"}, State: counts, ByKeys: true, Fields: []string{"args", "count"}}, args)
		g.op("peek", keyed, "args", "count")
		asked := g.add(Node{Kind: Query, Name: "query", In: []string{}, State: counts, ByKeys: true, AllPartitions: true, Fields: []string{"args", "word", "count"}}, g.op("filter", args, "args"))
		g.op("peek", asked, "args", "word", "count")
		shared := g.partition(args, Broadcast) // read by a query and by a function: a stage of its own
		g.add(Node{Kind: Query, Name: "query", In: []string{}, State: counts, ByKeys: true, Fields: []string{"args", "word", "count"}}, shared)
		g.op("each", shared, "args")
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
	"resources": func(g *graph) { // Storm's Trident RAS example (docs/Trident-RAS-API.md)
		src := g.source("s", "sentence")
		src.Load = Load{CPU: 20, MemoryMB: 512 + 256}
		words := g.add(Node{Kind: Op, Name: "each", In: []string{"sentence"}, Fields: []string{"sentence", "word"}, Load: Load{CPU: 10, MemoryMB: 512}}, src)
		bang := g.add(Node{Kind: Op, Name: "each", In: []string{"word"}, Fields: []string{"sentence", "word", "word!"}, Hint: 10, Load: Load{CPU: 50, MemoryMB: 1024}}, words)
		g.partition(bang, ByFields, "word!")
		pre := g.op("aggregate", bang, "word!", "$partial4")
		p := g.persist(g.partition(pre, ByFields, "word!"), []string{"$partial4"}, "word!", "count")
		p.Load = Load{CPU: 100, MemoryMB: 2048}
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

// TestLoadsSumPerStage: as Storm sums the resources of the operations it
// combines into one bolt, a stage's load is the sum of its nodes' loads
// (Storm's Trident RAS example: Split at 10% and BangAdder at 50% make a
// bolt of 60%); a stage whose nodes declare none needs nothing.
func TestLoadsSumPerStage(t *testing.T) {
	nodes := build("resources")
	p := New(nodes)
	want := map[string]Load{
		"spout-s": {CPU: 20 + 10 + 50, MemoryMB: 768 + 512 + 1024}, // squall runs a source's first operations in its stage
		"b-1":     {CPU: 100, MemoryMB: 2048},
	}
	if len(p.Stages) != len(want) {
		t.Fatalf("%d stages, want %d:\n%s", len(p.Stages), len(want), Print(p))
	}
	for _, s := range p.Stages {
		if s.Load != want[s.Name] {
			t.Errorf("stage %s: load %v, want %v", s.Name, s.Load, want[s.Name])
		}
	}
	for _, s := range New(build("wordcount")).Stages {
		if !s.Load.IsZero() {
			t.Errorf("wordcount declares no load, but stage %s needs %v", s.Name, s.Load)
		}
	}
}

// TestQueryRoutes: which tasks of the state's stage answer a query tuple.
// A query right after Broadcast, or one that asks for every partition,
// reaches every task (Storm's broadcast().stateQuery(...)); a Broadcast
// read only by such queries runs in its parent's stage, so that no stage
// copies the tuples first; a query of map state keyed by group goes to
// the task of its key.
func TestQueryRoutes(t *testing.T) {
	nodes := build("broadcastquery")
	p := New(nodes)
	counts := p.StageOf(nodes[5])
	for _, tc := range []struct {
		name  string
		query int
		from  int // the node whose data stream the query reads
		want  Route
	}{
		{"after Broadcast", 8, 7, Route{How: Broadcast}},
		{"keyed", 10, 6, Route{How: ByFields, Fields: []string{"args"}}},
		{"asks every partition", 13, 12, Route{How: Broadcast}},
		{"after a Broadcast with other readers", 16, 15, Route{How: Broadcast}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := nodes[tc.query]
			if q.Kind != Query || p.StageOf(q) != counts {
				t.Fatalf("n%d (%v) runs in %v; want the query in the state's stage %v", tc.query, q.Name, p.StageOf(q), counts)
			}
			var got []Input
			for _, in := range counts.Inputs {
				if in.Entry == q {
					got = append(got, in)
				}
			}
			if len(got) != 1 || got[0].From != nodes[tc.from] || got[0].Route().String() != tc.want.String() {
				t.Fatalf("inputs of n%d = %+v; want one from n%d routed %v", tc.query, got, tc.from, tc.want)
			}
		})
	}
	// The Broadcast read only by a query adds no stage and no copies: it
	// runs in the query stream's source stage, which keeps one task.
	src := p.StageOf(nodes[6])
	if p.StageOf(nodes[7]) != src || src.Parallelism != 1 {
		t.Fatalf("the Broadcast before n8 runs in %v (parallelism %d); want the source stage %v with one task", p.StageOf(nodes[7]), src.Parallelism, src)
	}
	if s := p.StageOf(nodes[15]); s == src || s == nil || s.Entry != nodes[15] {
		t.Fatalf("the Broadcast read by a function runs in %v; want a stage of its own", s)
	}
}
