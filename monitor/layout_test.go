package monitor

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/squallstream/squall/topology"
)

func TestLayoutLayers(t *testing.T) {
	// a → b → d, a → c → d, e → d, d → f; x stands alone.
	edges := []graphEdge{{From: "a", To: "b"}, {From: "a", To: "c"}, {From: "b", To: "d"},
		{From: "c", To: "d"}, {From: "e", To: "d"}, {From: "d", To: "f"},
		{From: "a", To: "a"}, {From: "a", To: "nope"}} // a self loop and an unknown: left out
	lay := layoutGraph([]string{"f", "e", "d", "c", "b", "a", "x"}, edges)

	want := map[string]int{"a": 0, "e": 0, "x": 0, "b": 1, "c": 1, "d": 2, "f": 3}
	at := map[string]placedNode{}
	for _, n := range lay.Nodes {
		at[n.ID] = n
		if n.Layer != want[n.ID] {
			t.Errorf("%s in layer %d, want %d", n.ID, n.Layer, want[n.ID])
		}
	}
	if len(at) != len(want) {
		t.Fatalf("%d nodes, want %d: %+v", len(at), len(want), lay.Nodes)
	}
	if len(lay.Edges) != 6 {
		t.Fatalf("%d edges, want 6: %+v", len(lay.Edges), lay.Edges)
	}
	for _, e := range lay.Edges {
		if e.X1 >= e.X2 {
			t.Errorf("edge %s→%s goes right to left: %d → %d", e.From, e.To, e.X1, e.X2)
		}
		if from, to := at[e.From], at[e.To]; e.X1 != from.X+from.W || e.X2 != to.X {
			t.Errorf("edge %s→%s does not join its boxes", e.From, e.To)
		}
	}
	// No two boxes overlap, and all lie inside the drawing.
	for i, a := range lay.Nodes {
		if a.X < 0 || a.Y < 0 || a.X+a.W > lay.Width || a.Y+a.H > lay.Height {
			t.Errorf("%s %+v outside %dx%d", a.ID, a, lay.Width, lay.Height)
		}
		for _, b := range lay.Nodes[i+1:] {
			if a.X < b.X+b.W && b.X < a.X+a.W && a.Y < b.Y+b.H && b.Y < a.Y+a.H {
				t.Errorf("%s %+v overlaps %s %+v", a.ID, a, b.ID, b)
			}
		}
	}
	// e → d skips layer 1: it runs above b and c, in the gaps beside them,
	// and no segment of it crosses a box.
	for _, e := range lay.Edges {
		skips := at[e.To].Layer-at[e.From].Layer > 1
		if skips != (e.Via != nil) {
			t.Errorf("edge %s→%s: via %v", e.From, e.To, e.Via)
		}
		pts := append(append([]point{{e.X1, e.Y1}}, e.Via...), point{e.X2, e.Y2})
		for i := 1; e.Via != nil && i < len(pts); i++ {
			p, q := pts[i-1], pts[i]
			if p.X != q.X && p.Y != q.Y {
				t.Errorf("edge %s→%s: segment %v-%v is not straight", e.From, e.To, p, q)
			}
			for _, n := range lay.Nodes {
				if p.Y < 0 || q.Y < 0 {
					t.Errorf("edge %s→%s leaves the drawing", e.From, e.To)
				}
				if min(p.X, q.X) < n.X+n.W && max(p.X, q.X) > n.X && min(p.Y, q.Y) < n.Y+n.H && max(p.Y, q.Y) > n.Y {
					t.Errorf("edge %s→%s: segment %v-%v crosses %s %+v", e.From, e.To, p, q, n.ID, n)
				}
			}
		}
	}
	// Layer 1 follows the rows of its inputs; ties by name.
	if at["b"].Row != 0 || at["c"].Row != 1 {
		t.Errorf("rows of b and c: %d, %d", at["b"].Row, at["c"].Row)
	}
}

func TestLayoutMergesParallelEdges(t *testing.T) {
	lay := layoutGraph([]string{"m", "b"}, []graphEdge{{From: "m", To: "b", Label: "$batch (all)"}, {From: "m", To: "b", Label: "s1 (shuffle)"}})
	if len(lay.Edges) != 1 || lay.Edges[0].Label != "$batch (all), s1 (shuffle)" {
		t.Fatalf("edges %+v", lay.Edges)
	}
}

func TestLayoutOrdersByInputs(t *testing.T) {
	// z's input is in row 0, a's in row 1: z goes above a.
	lay := layoutGraph([]string{"p", "q", "a", "z"}, []graphEdge{{From: "p", To: "z"}, {From: "q", To: "a"}})
	rows := map[string]int{}
	for _, n := range lay.Nodes {
		rows[n.ID] = n.Row
	}
	if rows["z"] != 0 || rows["a"] != 1 {
		t.Fatalf("rows %v: want z above a", rows)
	}
}

func TestLayoutCycleAndEmpty(t *testing.T) {
	lay := layoutGraph([]string{"s", "a", "b"}, []graphEdge{{From: "s", To: "a"}, {From: "a", To: "b"}, {From: "b", To: "a"}})
	for _, n := range lay.Nodes {
		if n.ID == "s" && n.Layer != 0 || n.ID != "s" && n.Layer != 1 {
			t.Errorf("%s in layer %d", n.ID, n.Layer)
		}
	}
	if one := layoutGraph([]string{"alone"}, nil); len(one.Nodes) != 1 || one.Nodes[0].Layer != 0 || one.Width < layoutMinBoxW {
		t.Fatalf("one component: %+v", one)
	}
	if empty := layoutGraph(nil, nil); len(empty.Nodes) != 0 || empty.Width <= 0 || empty.Height <= 0 {
		t.Fatalf("empty layout: %+v", empty)
	}
}

func TestGraphSVGParses(t *testing.T) {
	g := topology.Graph{
		Components: []topology.GraphComponent{{ID: "spout <&>", Spout: true}, {ID: "count"}, {ID: "sink"}},
		Edges: []topology.Edge{
			{From: "spout <&>", Stream: "default", To: "count", Grouping: "fields[word]"},
			{From: "count", Stream: "default", To: "sink", Grouping: "global"},
		},
	}
	svg, err := graphSVG(g, func(id string) string { return "n " + id })
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(svg, []byte("spout &lt;&amp;&gt;")) || bytes.Contains(svg, []byte("spout <&>")) {
		t.Fatalf("the name is not escaped:\n%s", svg)
	}
	// Parse it back: the root, three boxes with their names, two edges.
	dec := xml.NewDecoder(bytes.NewReader(svg))
	var root string
	rects, paths := 0, 0
	var texts []string
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the SVG does not parse: %v\n%s", err, svg)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tok.Name.Space + " " + tok.Name.Local
			}
			switch tok.Name.Local {
			case "rect":
				rects++
			case "path":
				paths++ // the arrow head's too
			case "text":
				var s string
				if err := dec.DecodeElement(&s, &tok); err != nil {
					t.Fatal(err)
				}
				texts = append(texts, s)
			}
		}
	}
	if root != "http://www.w3.org/2000/svg svg" {
		t.Fatalf("root element %q", root)
	}
	if rects != 3 || paths != 3 {
		t.Fatalf("%d boxes and %d paths, want 3 and 3 (two edges, one arrow head)", rects, paths)
	}
	all := strings.Join(texts, "|")
	for _, want := range []string{"spout <&>", "n spout <&>", "count", "n count", "sink"} {
		if !strings.Contains(all, want) {
			t.Errorf("texts %q lack %q", all, want)
		}
	}
}

func TestGraphView(t *testing.T) {
	g := topology.Graph{
		Components: []topology.GraphComponent{{ID: "b", Parallelism: 2, Tasks: 4}, {ID: "s", Spout: true, Parallelism: 1, Tasks: 1}},
		Edges:      []topology.Edge{{From: "s", Stream: "default", To: "b", Grouping: "shuffle"}},
	}
	v := graphView(g)
	if len(v.Components) != 2 || v.Components[0] != (GraphComponentView{Name: "b", Kind: "bolt", Parallelism: 2, Tasks: 4, Layer: 1}) ||
		v.Components[1] != (GraphComponentView{Name: "s", Kind: "spout", Parallelism: 1, Tasks: 1, Layer: 0}) {
		t.Fatalf("components %+v", v.Components)
	}
	if len(v.Edges) != 1 || v.Edges[0] != (GraphEdgeView{From: "s", Stream: "default", To: "b", Grouping: "shuffle"}) {
		t.Fatalf("edges %+v", v.Edges)
	}
}
