package monitor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/transport"
	"github.com/squallstream/squall/trident"
	"github.com/squallstream/squall/txn"
)

// fullTopology implements every optional interface the figures read, so
// every declared figure applies to it.
type fullTopology struct{ done chan struct{} }

var lat = topology.Latency{Count: 3, P50: time.Millisecond, P99: 2 * time.Millisecond, Max: 3 * time.Millisecond, Sum: 6 * time.Millisecond,
	Buckets: []topology.LatencyBucket{{Below: 1 << 22, Count: 3}}}

func (f fullTopology) Name() string { return "full" }
func (f fullTopology) Stats() topology.Stats {
	return topology.Stats{Components: map[string]topology.ComponentStats{
		"c": {Emitted: 1, Transferred: 2, Executed: 3, Acked: 4, Failed: 5, TimedOut: 6, Errors: 7, Orphans: 8, Executors: 2,
			Busy: time.Second, CompleteLatency: lat, ExecuteLatency: lat,
			Tasks: []topology.TaskStats{{Task: 9, Emitted: 1, Transferred: 2, Executed: 3, Acked: 4, Failed: 5}}},
	}}
}
func (f fullTopology) Health() topology.Health          { return topology.Health{Running: true, Crashes: 1} }
func (f fullTopology) Errors() []topology.ReportedError { return nil }
func (f fullTopology) Pending() int64                   { return 3 }
func (f fullTopology) Activate()                        {}
func (f fullTopology) Deactivate()                      {}
func (f fullTopology) Stop(context.Context) error       { return nil }
func (f fullTopology) Done() <-chan struct{}            { return f.done }
func (f fullTopology) Committed() txn.TxID              { return 11 }
func (f fullTopology) FailedAttempts() uint64           { return 12 }
func (f fullTopology) Rejected() uint64                 { return 13 }
func (f fullTopology) Quarantined() uint64              { return 14 }
func (f fullTopology) Announced() uint64                { return 15 }
func (f fullTopology) Replayed() uint64                 { return 16 }
func (f fullTopology) BatchLatency() topology.Latency   { return lat }
func (f fullTopology) CommitLatency() topology.Latency  { return lat }
func (f fullTopology) Generation() state.Generation     { return 17 }
func (f fullTopology) Halted() <-chan struct{}          { return f.done }
func (f fullTopology) Err() error                       { return errors.New("halted") }
func (f fullTopology) Active() bool                     { return true }
func (f fullTopology) InFlight() int64                  { return 1 }
func (f fullTopology) FencingRejections() uint64        { return 18 }
func (f fullTopology) TransportStats() (transport.ServerStats, bool) {
	return transport.ServerStats{}, true
}
func (f fullTopology) States() []trident.StateStats {
	return []trident.StateStats{{Name: "persist-1", Component: "c", Reads: 1, Writes: 2, Errors: 3}}
}

// figureOutputs serves reg (with fullTopology registered) and returns
// its metric families, the REST documents of the topology, its component
// and the index and topology pages.
type figureOutputs struct {
	fams       map[string]*dto.MetricFamily
	list       map[string]any // the topology in GET /api/v1/topologies
	detail     map[string]any
	component  map[string]any
	index, top string
}

func outputs(t *testing.T, reg *Registry) figureOutputs {
	t.Helper()
	s, err := NewServer(reg, Config{})
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) []byte {
		t.Helper()
		req := httptest.NewRequest("GET", path, nil)
		req.Host, req.RemoteAddr = "127.0.0.1", "127.0.0.1:40000"
		req.Header.Set("Accept", "text/plain")
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
		}
		return rec.Body.Bytes()
	}
	doc := func(path string) map[string]any {
		t.Helper()
		var m map[string]any
		if err := json.Unmarshal(get(path), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	var o figureOutputs
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(get("/metrics")))
	if err != nil {
		t.Fatal(err)
	}
	o.fams = fams
	o.list = doc("/api/v1/topologies")["topologies"].([]any)[0].(map[string]any)
	o.detail = doc("/api/v1/topologies/full")
	o.component = doc("/api/v1/topologies/full/components/c")
	o.index, o.top = string(get("/ui/partials/topologies")), string(get("/ui/partials/topologies/full"))
	return o
}

// at returns the JSON value at path (names separated by dots) in doc.
func at(doc map[string]any, path string) (any, bool) {
	var v any = doc
	for name := range strings.SplitSeq(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[name]; !ok {
			return nil, false
		}
	}
	return v, v != nil
}

// registered returns a registry holding fullTopology, 10 s after it was
// registered (so the capacity's window covers time).
func registered(t *testing.T, extend func(*figureSet)) *Registry {
	reg := NewRegistry()
	if extend != nil {
		extend(reg.figs)
	}
	lag := LagFunc(func() []PartitionLag { return []PartitionLag{{Partition: "events@0", Next: 1, LogEnd: 3, Lag: 2}} })
	src := SourceStatsFunc(func() SourceCounters { return SourceCounters{DeadLettered: 4} })
	if err := reg.Add(fullTopology{done: make(chan struct{})}, Options{Lag: lag, Sources: src}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Second)
	return reg
}

// noREST are the figures with no REST field: each is a decision, so a
// new one is added here on purpose.
var noREST = map[string]bool{"squall_transport_refused_total": true, "squall_component_capacity": true}

// Every declared figure shows in /metrics, in its REST document, and,
// with a column, in its UI table; those of a topology in the topology's
// documents, those of a component in its ComponentDetail and in the
// topology's components, those of a task in the tasks and those of a
// state in the states.
func TestEveryFigureInEveryOutput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := registered(t, nil)
		o := outputs(t, reg)
		f := reg.figs
		check := func(name, field, column string, docs []map[string]any, page string) {
			t.Helper()
			if o.fams[name] == nil || len(o.fams[name].GetMetric()) == 0 {
				t.Errorf("%s: not in /metrics", name)
			}
			if field == "" {
				if !noREST[name] {
					t.Errorf("%s: no REST field", name)
				}
			}
			for _, d := range docs {
				if _, ok := at(d, field); field != "" && !ok {
					t.Errorf("%s: no %q in the REST document %v", name, field, d)
				}
			}
			if column != "" && !strings.Contains(page, "<th>"+column+"</th>") {
				t.Errorf("%s: no column %q in the page:\n%s", name, column, page)
			}
		}
		firstOf := func(list string) map[string]any { return o.detail[list].([]any)[0].(map[string]any) }
		for _, d := range f.topology {
			docs := []map[string]any{o.detail}
			if !strings.HasPrefix(d.field, "worker.") && d.field != "lag" { // the detail's own fields
				docs = append(docs, o.list)
			}
			check(d.name, d.field, d.column, docs, o.index)
		}
		for _, d := range f.component {
			check(d.name, d.field, d.column, []map[string]any{o.component, firstOf("components")}, o.top)
		}
		for _, d := range f.task {
			check(d.name, d.field, d.column, []map[string]any{o.component["tasks"].([]any)[0].(map[string]any)}, "")
		}
		for _, d := range f.state {
			check(d.name, d.field, d.column, []map[string]any{firstOf("states")}, "")
		}
		for name := range noREST {
			if o.fams[name] == nil {
				t.Errorf("%s is in noREST but not declared", name)
			}
		}
		// The pages show the values in their columns; the dead letters
		// column adds the sources' 4 to the operations' 13.
		for _, want := range []string{`<td class="n">11</td><td class="n">3</td><td class="n">12</td><td class="n">17 (4 from sources)</td><td class="n">3</td><td class="n">1</td>`,
			`<td class="n">1</td><td class="n">3</td><td class="n">4</td><td class="n">5</td><td class="n">6</td><td class="n">7</td><td class="n">1ms / 2ms</td>`} {
			if !strings.Contains(o.index+o.top, want) {
				t.Errorf("the pages lack %s:\n%s\n%s", want, o.index, o.top)
			}
		}
	})
}

// A figure declared in a test shows in all three outputs: a topology
// figure filling error_count (a REST field no metric exports), and a
// component figure filling orphans, each with a column.
func TestDeclaredFigureShowsEverywhere(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := registered(t, func(f *figureSet) {
			f.topology = append(f.topology, declare(scopeTopology, []figure[*reading]{{
				name: "squall_test_extra_total", help: "A figure of the test.", kind: kindCounter,
				field: "error_count", column: "test extra",
				value: func(*reading) (any, bool) { return uint64(4242), true },
			}})...)
			f.component = append(f.component, declare(scopeComponent, []figure[componentReading]{{
				name: "squall_test_component_extra", help: "A component figure of the test.", kind: kindGauge,
				field: "orphans", column: "test component extra",
				value: func(c componentReading) (any, bool) { return int64(len(c.name)) + 76, true },
			}})...)
		})
		o := outputs(t, reg)
		for name, want := range map[string]float64{"squall_test_extra_total": 4242, "squall_test_component_extra": 77} {
			fam := o.fams[name]
			if fam == nil || len(fam.GetMetric()) != 1 {
				t.Fatalf("%s: %v", name, fam)
			}
			m := fam.GetMetric()[0]
			if v := m.GetCounter().GetValue() + m.GetGauge().GetValue(); v != want {
				t.Errorf("%s = %v, want %v", name, v, want)
			}
		}
		for _, c := range []struct {
			doc   map[string]any
			field string
			want  float64
		}{{o.list, "error_count", 4242}, {o.detail, "error_count", 4242}, {o.component, "orphans", 77}} {
			if v, _ := at(c.doc, c.field); v != c.want {
				t.Errorf("REST %s = %v, want %v", c.field, v, c.want)
			}
		}
		for page, want := range map[string]string{
			o.index: `<th>test extra</th><th>errors</th></tr>`, o.top: `<th>test component extra</th></tr>`,
		} {
			if !strings.Contains(page, want) {
				t.Errorf("the page lacks %s:\n%s", want, page)
			}
		}
		if !strings.Contains(o.index, `<td class="n">4242</td>`) || !strings.Contains(o.top, `<td class="n">77</td>`) {
			t.Errorf("the pages lack the declared figures' values:\n%s\n%s", o.index, o.top)
		}
	})
}

// Every declared REST field names a field of its scope's document type,
// and every column heading is unique in its table.
func TestDeclaredFieldsExist(t *testing.T) {
	f := newFigureSet()
	var d TopologyDetail
	d.Batches, d.Active = &BatchesView{}, new(bool)
	docs := map[string]any{"topology": &d, "component": &ComponentView{}, "task": &TaskView{}, "state": &StateView{}}
	checkScope(t, "topology", docs, f.topology)
	checkScope(t, "component", docs, f.component)
	checkScope(t, "task", docs, f.task)
	checkScope(t, "state", docs, f.state)
	if _, ok := fieldAt(reflectValue(&d), "batches.no_such_field"); ok {
		t.Fatal("fieldAt found a field that does not exist")
	}
}

func checkScope[S any](t *testing.T, scope string, docs map[string]any, ds []declared[S]) {
	t.Helper()
	seen := map[string]bool{}
	for _, d := range ds {
		if d.field != "" {
			if _, ok := fieldAt(reflectValue(docs[scope]), d.field); !ok {
				t.Errorf("%s: the %s document has no field %q", d.name, scope, d.field)
			}
		}
		if d.column != "" && seen[d.column] {
			t.Errorf("%s: column %q twice", d.name, d.column)
		}
		seen[d.column] = true
		if (d.value == nil) == (d.series == nil) && d.value == nil {
			t.Errorf("%s: neither value nor series", d.name)
		}
	}
}

// docs/operations.md lists every declared metric, so the page cannot
// drift from the declarations.
func TestOperationsDocListsEveryFigure(t *testing.T) {
	page, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	f := newFigureSet()
	var names []string
	for _, d := range f.topology {
		names = append(names, d.name)
	}
	for _, d := range f.component {
		names = append(names, d.name)
	}
	for _, d := range f.task {
		names = append(names, d.name)
	}
	for _, d := range f.state {
		names = append(names, d.name)
	}
	for _, name := range names {
		row := regexp.MustCompile("(?m)^\\| `" + regexp.QuoteMeta(name) + "` \\|")
		if !row.Match(page) {
			t.Errorf("docs/operations.md has no row for %s in its metrics table", name)
		}
	}
	if len(names) < 40 {
		t.Fatalf("%d declared figures: %s", len(names), fmt.Sprint(names))
	}
}

func reflectValue(p any) reflect.Value { return reflect.ValueOf(p).Elem() }
