package topology

import (
	"reflect"
	"testing"
)

func TestGraph(t *testing.T) {
	f := newFeed()
	b := NewBuilder()
	b.Spout("spout", f.newSpout).Output("word").OutputStream("side", "x")
	b.Bolt("count", boltFunc(ackAll).newBolt).Output("n").Input("spout", ByFields("word")).Parallelism(2).Tasks(4)
	b.Bolt("sink", boltFunc(ackAll).newBolt).Input("count", Global()).InputStream("spout", "side", Shuffle())
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	want := Graph{
		Components: []GraphComponent{
			{ID: "count", Parallelism: 2, Tasks: 4},
			{ID: "sink", Parallelism: 1, Tasks: 1},
			{ID: "spout", Spout: true, Parallelism: 1, Tasks: 1},
		},
		Edges: []Edge{
			{From: "count", Stream: DefaultStream, To: "sink", Grouping: "global"},
			{From: "spout", Stream: DefaultStream, To: "count", Grouping: "fields[word]"},
			{From: "spout", Stream: "side", To: "sink", Grouping: "shuffle"},
		},
	}
	if got := topo.Graph(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Graph() =\n%+v\nwant\n%+v", got, want)
	}
}
