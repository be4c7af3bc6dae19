package monitor

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The UI: server-rendered pages that htmx (ui/static/htmx.min.js,
// vendored; see ui/static/README.md) refreshes every two seconds by
// fetching their partials.
//
//go:embed ui/templates/*.html
var templateFS embed.FS

//go:embed ui/static/htmx.min.js
var staticFS embed.FS

// recentErrors is how many errors the topology page shows.
const recentErrors = 20

type ui struct {
	reg      *Registry
	logsData func(*http.Request) logsData
	pages    map[string]*template.Template // by page file
	staticFS fs.FS
}

var uiFuncs = template.FuncMap{
	"path": url.PathEscape,
	"secs": func(s float64) string {
		return time.Duration(s * float64(time.Second)).Round(time.Microsecond).String()
	},
	"span": func(s float64) string {
		return time.Duration(s * float64(time.Second)).Round(time.Second).String()
	},
	"ts": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
}

func newUI(reg *Registry, logs func(*http.Request) logsData) (*ui, error) {
	u := &ui{reg: reg, logsData: logs, pages: make(map[string]*template.Template)}
	for _, page := range []string{"index.html", "topology.html", "logs.html"} {
		t, err := template.New("").Funcs(uiFuncs).ParseFS(templateFS, "ui/templates/layout.html", "ui/templates/"+page)
		if err != nil {
			return nil, fmt.Errorf("monitor: parsing the UI templates: %w", err)
		}
		u.pages[page] = t
	}
	static, err := fs.Sub(staticFS, "ui")
	if err != nil {
		return nil, err
	}
	u.staticFS = static
	return u, nil
}

// static serves /static/ from the embedded files.
func (u *ui) static() http.Handler {
	fsrv := http.FileServerFS(u.staticFS)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		fsrv.ServeHTTP(w, r)
	})
}

// render executes a template into a buffer first, so a failure answers
// 500 instead of a half page.
func render(w http.ResponseWriter, t *template.Template, name string, data any) {
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, name, data); err != nil {
		http.Error(w, "rendering the page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	_, _ = w.Write(buf.Bytes())
}

// indexData is what the index page shows.
type indexData struct {
	Title      string
	Ready      bool
	Columns    []string // the headings of the declared figures' columns
	Topologies []indexRow
}

// indexRow is one topology of the index page: its summary, and the
// cells of the declared figures' columns.
type indexRow struct {
	TopologySummary
	Cells []cell
}

func (u *ui) indexData() indexData {
	d := indexData{Title: "squall", Ready: true, Columns: columns(u.reg.figs.topology), Topologies: []indexRow{}}
	for _, e := range u.reg.all() {
		r := e.read()
		s := r.summary()
		d.Ready = d.Ready && s.Ready
		d.Topologies = append(d.Topologies, indexRow{TopologySummary: s, Cells: cells(e.figs.topology, r)})
	}
	return d
}

func (u *ui) indexPage(w http.ResponseWriter, _ *http.Request) {
	render(w, u.pages["index.html"], "layout", u.indexData())
}

func (u *ui) indexPartial(w http.ResponseWriter, _ *http.Request) {
	render(w, u.pages["index.html"], "topologies", u.indexData())
}

// topologyData is what the topology page shows.
type topologyData struct {
	Title  string
	T      TopologyDetail
	Recent []ErrorView   // newest first
	Graph  template.HTML // the SVG drawing of T.Graph; empty without one
	// Columns are the headings of the declared component figures'
	// columns, and Components the components' rows, sorted by name.
	Columns    []string
	Components []componentRow
}

// componentRow is one component of the topology page: its name and the
// cells of the declared figures' columns.
type componentRow struct {
	Name  string
	Cells []cell
}

// componentRows returns r's components' rows, sorted by name.
func (r *reading) componentRows() []componentRow {
	rows := make([]componentRow, 0, len(r.stats.Components))
	for name, s := range r.stats.Components {
		rows = append(rows, componentRow{Name: name, Cells: cells(r.e.figs.component, componentReading{top: r, name: name, stats: s})})
	}
	slices.SortFunc(rows, func(a, b componentRow) int { return strings.Compare(a.Name, b.Name) })
	return rows
}

func (u *ui) topologyData(w http.ResponseWriter, r *http.Request) (topologyData, bool) {
	name := r.PathValue("name")
	e := u.reg.lookup(name)
	if e == nil {
		http.Error(w, fmt.Sprintf("no topology named %q", name), http.StatusNotFound)
		return topologyData{}, false
	}
	rd := e.read()
	d := topologyData{Title: name + " · squall", T: rd.detail(), Columns: columns(e.figs.component), Components: rd.componentRows()}
	d.Recent = slices.Clone(d.T.Errors)
	slices.Reverse(d.Recent)
	d.Recent = d.Recent[:min(len(d.Recent), recentErrors)]
	g, err := e.graphHTML(d.T.Components)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return topologyData{}, false
	}
	d.Graph = g
	return d, true
}

func (u *ui) topology(w http.ResponseWriter, r *http.Request) {
	if d, ok := u.topologyData(w, r); ok {
		render(w, u.pages["topology.html"], "layout", d)
	}
}

func (u *ui) topologyPartial(w http.ResponseWriter, r *http.Request) {
	if d, ok := u.topologyData(w, r); ok {
		render(w, u.pages["topology.html"], "topology", d)
	}
}

func (u *ui) logs(w http.ResponseWriter, r *http.Request) {
	render(w, u.pages["logs.html"], "layout", u.logsData(r))
}

func (u *ui) logsPartial(w http.ResponseWriter, r *http.Request) {
	render(w, u.pages["logs.html"], "lines", u.logsData(r))
}
