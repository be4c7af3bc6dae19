package monitor

import (
	"cmp"
	"slices"
	"unicode/utf8"
)

// The layout of the topology graph: a pure function from components and
// streams to boxes and edge end points, drawn left to right in layers.
// A component's layer is the length of the longest path to it from a
// component without inputs (its place in a topological order); within a
// layer, components are ordered by the mean row of their inputs (then by
// name), which keeps most edges from crossing.

// Sizes of the layout, in SVG user units (CSS pixels at scale 1).
const (
	layoutMargin  = 12
	layoutColGap  = 70 // between the columns of two layers
	layoutRowGap  = 18 // between two boxes of a layer
	layoutBoxH    = 46
	layoutMinBoxW = 120
	layoutCharW   = 8 // the width of a character of a label, roughly
	layoutPadW    = 24
)

// graphEdge is an edge to lay out: a stream from one component to another.
type graphEdge struct {
	From, To string
	Label    string // shown on hover: stream and grouping
}

// placedNode is a component's box.
type placedNode struct {
	ID         string
	Layer, Row int
	X, Y, W, H int
}

// routedEdge is a drawn edge between two boxes: from the middle of From's
// right side to the middle of To's left side. Between adjacent layers it
// is one curve; an edge that skips layers runs above the boxes it passes,
// through the points Via. Parallel edges (several streams between the
// same two components) are drawn as one, their labels joined.
type routedEdge struct {
	graphEdge
	X1, Y1, X2, Y2 int
	Via            []point // nil between adjacent layers
}

// point is a point of the drawing.
type point struct{ X, Y int }

// layoutLane is the distance between the lanes of edges that skip layers.
const layoutLane = 12

// graphLayout is a laid-out graph; Width and Height enclose every box.
type graphLayout struct {
	Nodes         []placedNode // by layer, then row
	Edges         []routedEdge // in the order given
	Width, Height int
}

// layoutGraph lays out the components ids and the edges between them.
// Edges naming an unknown component are left out; so are self loops. A
// cycle (which a built topology cannot have) does not stop it: the
// components on it go in the layer after the others.
func layoutGraph(ids []string, edges []graphEdge) graphLayout {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	known := make(map[string]bool, len(ids))
	for _, id := range ids {
		known[id] = true
	}
	var kept []graphEdge
	index := make(map[[2]string]int) // of kept, by From and To
	for _, e := range edges {
		if !known[e.From] || !known[e.To] || e.From == e.To {
			continue
		}
		if i, dup := index[[2]string{e.From, e.To}]; dup {
			kept[i].Label += ", " + e.Label
			continue
		}
		index[[2]string{e.From, e.To}] = len(kept)
		kept = append(kept, e)
	}
	layer := layers(ids, kept)

	// Group by layer, ordering each by the mean row of its inputs.
	nLayers := 0
	for _, id := range ids {
		nLayers = max(nLayers, layer[id]+1)
	}
	cols := make([][]string, nLayers)
	for _, id := range ids {
		cols[layer[id]] = append(cols[layer[id]], id)
	}
	row := make(map[string]int, len(ids))
	for l, col := range cols {
		mean := make(map[string]float64, len(col))
		for _, id := range col {
			sum, n := 0.0, 0
			for _, e := range kept {
				if e.To == id && layer[e.From] < l {
					sum += float64(row[e.From])
					n++
				}
			}
			if n > 0 {
				mean[id] = sum / float64(n)
			}
		}
		slices.SortStableFunc(col, func(a, b string) int { return cmp.Compare(mean[a], mean[b]) })
		for r, id := range col {
			row[id] = r
		}
	}

	// Coordinates: one column per layer, as wide as its widest label;
	// each column centred vertically on the tallest.
	maxRows := 0
	for _, col := range cols {
		maxRows = max(maxRows, len(col))
	}
	height := 2*layoutMargin + maxRows*layoutBoxH + max(maxRows-1, 0)*layoutRowGap
	g := graphLayout{Height: height}
	at := make(map[string]placedNode, len(ids))
	x := layoutMargin
	for l, col := range cols {
		w := layoutMinBoxW
		for _, id := range col {
			w = max(w, utf8.RuneCountInString(id)*layoutCharW+layoutPadW)
		}
		colH := len(col)*layoutBoxH + max(len(col)-1, 0)*layoutRowGap
		y := (height - colH) / 2
		for r, id := range col {
			n := placedNode{ID: id, Layer: l, Row: r, X: x, Y: y, W: w, H: layoutBoxH}
			g.Nodes = append(g.Nodes, n)
			at[id] = n
			y += layoutBoxH + layoutRowGap
		}
		x += w + layoutColGap
	}
	g.Width = max(x-layoutColGap+layoutMargin, 2*layoutMargin)
	g.route(kept, at)
	return g
}

// route draws the edges between the placed boxes. An edge that skips
// layers leaves its box rightwards, rises in the gap after it to a lane
// above every box of the layers it passes, and comes down in the gap
// before its target; each such edge has a lane of its own, and the
// drawing moves down when the lanes need room above the boxes.
func (g *graphLayout) route(edges []graphEdge, at map[string]placedNode) {
	top := make(map[int]int) // the highest box top of each layer
	for _, n := range g.Nodes {
		if t, ok := top[n.Layer]; !ok || n.Y < t {
			top[n.Layer] = n.Y
		}
	}
	lanes, minLane := 0, 0
	for _, e := range edges {
		from, to := at[e.From], at[e.To]
		r := routedEdge{graphEdge: e, X1: from.X + from.W, Y1: from.Y + from.H/2, X2: to.X, Y2: to.Y + to.H/2}
		if to.Layer-from.Layer > 1 || to.Layer <= from.Layer {
			lanes++
			lane := g.Height
			for l := min(from.Layer, to.Layer) + 1; l < max(from.Layer, to.Layer); l++ {
				lane = min(lane, top[l])
			}
			lane = min(lane, from.Y, to.Y) - lanes*layoutLane
			minLane = min(minLane, lane-layoutMargin/2)
			outX, inX := r.X1+layoutColGap/2-lanes%(layoutColGap/layoutLane)*2, r.X2-layoutColGap/2+lanes%(layoutColGap/layoutLane)*2
			r.Via = []point{{outX, r.Y1}, {outX, lane}, {inX, lane}, {inX, r.Y2}}
		}
		g.Edges = append(g.Edges, r)
	}
	if minLane >= 0 {
		return
	}
	shift := -minLane
	g.Height += shift
	for i := range g.Nodes {
		g.Nodes[i].Y += shift
	}
	for i := range g.Edges {
		e := &g.Edges[i]
		e.Y1 += shift
		e.Y2 += shift
		for j := range e.Via {
			e.Via[j].Y += shift
		}
	}
}

// layers returns each component's layer: the longest path to it from a
// component without inputs (Kahn's algorithm). Components left on a cycle
// get the layer after the last.
func layers(ids []string, edges []graphEdge) map[string]int {
	indeg := make(map[string]int, len(ids))
	out := make(map[string][]string, len(ids))
	for _, e := range edges {
		indeg[e.To]++
		out[e.From] = append(out[e.From], e.To)
	}
	layer := make(map[string]int, len(ids))
	var queue []string
	for _, id := range ids {
		if indeg[id] == 0 {
			queue = append(queue, id)
		}
	}
	last := 0
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		last = max(last, layer[id])
		for _, to := range out[id] {
			layer[to] = max(layer[to], layer[id]+1)
			if indeg[to]--; indeg[to] == 0 {
				queue = append(queue, to)
			}
		}
	}
	for _, id := range ids {
		if indeg[id] > 0 {
			layer[id] = last + 1
		}
	}
	return layer
}
