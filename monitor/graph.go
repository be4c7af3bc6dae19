package monitor

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"html/template"
	"strconv"

	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident"
)

// Grapher is what a running topology offers to have its graph drawn; the
// registry finds it by type assertion. *topology.Running and
// *trident.Running implement it.
type Grapher interface {
	Graph() topology.Graph
}

var (
	_ Grapher = (*topology.Running)(nil)
	_ Grapher = (*trident.Running)(nil)
)

// GraphView is the graph of a topology in TopologyDetail: its components
// and the streams between them, as the runtime runs them (for Trident, the
// generated tuple-level topology; the ackers are not shown).
type GraphView struct {
	Components []GraphComponentView `json:"components"` // sorted by name
	Edges      []GraphEdgeView      `json:"edges"`      // sorted by from, stream, to
}

// GraphComponentView is a component of GraphView.
type GraphComponentView struct {
	Name        string `json:"name"`
	Kind        string `json:"kind"` // "spout" or "bolt"
	Parallelism int    `json:"parallelism"`
	Tasks       int    `json:"tasks"`
	Layer       int    `json:"layer"` // its column in the drawing: the longest path to it from a spout
}

// GraphEdgeView is a bolt's subscription to a stream of another component.
type GraphEdgeView struct {
	From     string `json:"from"`
	Stream   string `json:"stream"`
	To       string `json:"to"`
	Grouping string `json:"grouping"` // "shuffle", "fields[word]", "global", ...
}

// graphView converts g, with the layers of its layout.
func graphView(g topology.Graph) *GraphView {
	lay := layoutGraph(graphIDs(g), graphEdges(g))
	layer := make(map[string]int, len(lay.Nodes))
	for _, n := range lay.Nodes {
		layer[n.ID] = n.Layer
	}
	v := &GraphView{Components: []GraphComponentView{}, Edges: []GraphEdgeView{}}
	for _, c := range g.Components {
		kind := "bolt"
		if c.Spout {
			kind = "spout"
		}
		v.Components = append(v.Components, GraphComponentView{Name: c.ID, Kind: kind, Parallelism: c.Parallelism, Tasks: c.Tasks, Layer: layer[c.ID]})
	}
	for _, e := range g.Edges {
		v.Edges = append(v.Edges, GraphEdgeView(e))
	}
	return v
}

func graphIDs(g topology.Graph) []string {
	ids := make([]string, len(g.Components))
	for i, c := range g.Components {
		ids[i] = c.ID
	}
	return ids
}

func graphEdges(g topology.Graph) []graphEdge {
	es := make([]graphEdge, len(g.Edges))
	for i, e := range g.Edges {
		es[i] = graphEdge{From: e.From, To: e.To, Label: e.Stream + " (" + e.Grouping + ")"}
	}
	return es
}

// The SVG document, as encoding/xml writes it (which escapes every name).
type (
	svgDoc struct {
		XMLName xml.Name   `xml:"svg"`
		NS      string     `xml:"xmlns,attr"`
		Class   string     `xml:"class,attr"`
		Width   int        `xml:"width,attr"`
		Height  int        `xml:"height,attr"`
		ViewBox string     `xml:"viewBox,attr"`
		Role    string     `xml:"role,attr"`
		Label   string     `xml:"aria-label,attr"`
		Style   string     `xml:"style"`
		Defs    svgDefs    `xml:"defs"`
		Groups  []svgGroup `xml:"g"` // the edges, then one per component
	}
	svgDefs struct {
		Marker svgMarker `xml:"marker"`
	}
	svgMarker struct {
		ID      string  `xml:"id,attr"`
		ViewBox string  `xml:"viewBox,attr"`
		RefX    int     `xml:"refX,attr"`
		RefY    int     `xml:"refY,attr"`
		W       int     `xml:"markerWidth,attr"`
		H       int     `xml:"markerHeight,attr"`
		Orient  string  `xml:"orient,attr"`
		Path    svgPath `xml:"path"`
	}
	svgPath struct {
		D string `xml:"d,attr"`
	}
	svgEdge struct {
		Class  string `xml:"class,attr"`
		D      string `xml:"d,attr"`
		Marker string `xml:"marker-end,attr"`
		Title  string `xml:"title"`
	}
	svgGroup struct {
		Class string    `xml:"class,attr"`
		Title string    `xml:"title,omitempty"`
		Paths []svgEdge `xml:"path"`
		Rect  *svgRect  `xml:"rect"`
		Text  []svgText `xml:"text"`
	}
	svgRect struct {
		X  int `xml:"x,attr"`
		Y  int `xml:"y,attr"`
		W  int `xml:"width,attr"`
		H  int `xml:"height,attr"`
		RX int `xml:"rx,attr"`
	}
	svgText struct {
		Class string `xml:"class,attr"`
		X     int    `xml:"x,attr"`
		Y     int    `xml:"y,attr"`
		Text  string `xml:",chardata"`
	}
)

const svgStyle = `
.edge { fill: none; stroke: #888; stroke-width: 1.3; }
marker path { fill: #888; }
.node rect { fill: #eef3fb; stroke: #5479b8; }
.node.spout rect { fill: #eaf6ec; stroke: #3f8f4f; }
.node text { font: 13px system-ui, sans-serif; fill: #222; text-anchor: middle; }
.node text.sub { font-size: 11px; fill: #555; }
`

// graphSVG draws g laid out by layoutGraph. sub gives a component's
// second line (its counters), if any.
func graphSVG(g topology.Graph, sub func(id string) string) ([]byte, error) {
	lay := layoutGraph(graphIDs(g), graphEdges(g))
	spout := make(map[string]bool, len(g.Components))
	for _, c := range g.Components {
		spout[c.ID] = c.Spout
	}
	doc := svgDoc{
		NS: "http://www.w3.org/2000/svg", Class: "topology-graph",
		Width: lay.Width, Height: lay.Height, ViewBox: fmt.Sprintf("0 0 %d %d", lay.Width, lay.Height),
		Role: "img", Label: "components and streams of the topology", Style: svgStyle,
		Defs: svgDefs{Marker: svgMarker{ID: "arrow", ViewBox: "0 0 10 10", RefX: 10, RefY: 5, W: 7, H: 7,
			Orient: "auto", Path: svgPath{D: "M0,0 L10,5 L0,10 z"}}},
	}
	edges := svgGroup{Class: "edges"}
	for _, e := range lay.Edges {
		d := fmt.Sprintf("M%d,%d", e.X1, e.Y1)
		if e.Via == nil {
			mid := (e.X1 + e.X2) / 2
			d += fmt.Sprintf(" C%d,%d %d,%d %d,%d", mid, e.Y1, mid, e.Y2, e.X2, e.Y2)
		} else {
			for _, p := range e.Via {
				d += fmt.Sprintf(" L%d,%d", p.X, p.Y)
			}
			d += fmt.Sprintf(" L%d,%d", e.X2, e.Y2)
		}
		edges.Paths = append(edges.Paths, svgEdge{Class: "edge", Marker: "url(#arrow)", Title: e.From + " → " + e.To + ": " + e.Label, D: d})
	}
	doc.Groups = append(doc.Groups, edges)
	for _, n := range lay.Nodes {
		class := "node bolt"
		if spout[n.ID] {
			class = "node spout"
		}
		cx := n.X + n.W/2
		sn := svgGroup{Class: class, Title: n.ID, Rect: &svgRect{X: n.X, Y: n.Y, W: n.W, H: n.H, RX: 6},
			Text: []svgText{{Class: "name", X: cx, Y: n.Y + 19, Text: n.ID}}}
		if sub != nil {
			if s := sub(n.ID); s != "" {
				sn.Text = append(sn.Text, svgText{Class: "sub", X: cx, Y: n.Y + 36, Text: s})
			}
		}
		doc.Groups = append(doc.Groups, sn)
	}
	var buf bytes.Buffer
	if err := xml.NewEncoder(&buf).Encode(doc); err != nil {
		return nil, fmt.Errorf("monitor: drawing the graph: %w", err)
	}
	return buf.Bytes(), nil
}

// graphHTML draws e's graph for the topology page, each component with
// its counters from comps; "" when the topology cannot tell its graph.
func (e *entry) graphHTML(comps []ComponentView) (template.HTML, error) {
	if e.graph == nil {
		return "", nil
	}
	g := e.graph.Graph()
	spout := make(map[string]bool, len(g.Components))
	for _, c := range g.Components {
		spout[c.ID] = c.Spout
	}
	byName := make(map[string]ComponentView, len(comps))
	for _, c := range comps {
		byName[c.Name] = c
	}
	svg, err := graphSVG(g, func(id string) string {
		c, ok := byName[id]
		switch {
		case !ok:
			return ""
		case spout[id]:
			return "emitted " + strconv.FormatUint(c.Emitted, 10)
		default:
			return "executed " + strconv.FormatUint(c.Executed, 10)
		}
	})
	if err != nil {
		return "", err
	}
	return template.HTML(svg), nil // encoding/xml escaped every name
}
