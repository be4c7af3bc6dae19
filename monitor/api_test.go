package monitor_test

import (
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/squallstream/squall/monitor"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestTopologiesAPI(t *testing.T) {
	ctx := testCtx(t)
	r := wordCount(t, ctx, "words", nil, 0)
	reg := monitor.NewRegistry()
	if err := reg.Add(r, monitor.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := reg.Add(r, monitor.Options{}); !errors.Is(err, monitor.ErrDuplicate) {
		t.Fatalf("second Add: %v, want ErrDuplicate", err)
	}
	ts := serve(t, reg, monitor.Config{})
	if err := r.WaitCommitted(ctx, 2); err != nil {
		t.Fatal(err)
	}

	var list monitor.TopologyList
	getJSON(t, ts, "GET", "/api/v1/topologies", nil, http.StatusOK, &list)
	if len(list.Topologies) != 1 {
		t.Fatalf("topologies: %+v", list)
	}
	s := list.Topologies[0]
	if s.Name != "words" || s.Kind != "trident" || s.Status != monitor.StatusRunning || !s.Ready {
		t.Fatalf("summary: %+v", s)
	}
	if s.Batches == nil || s.Batches.CommittedTxID < 2 || s.Batches.Committed < 2 || s.Batches.Generation == 0 || s.Batches.Halted {
		t.Fatalf("batches: %+v", s.Batches)
	}
	if s.LastAction != nil {
		t.Fatalf("last action before any: %+v", s.LastAction)
	}

	var d monitor.TopologyDetail
	getJSON(t, ts, "GET", "/api/v1/topologies/words", nil, http.StatusOK, &d)
	if !d.Worker.Running || d.Worker.LastCrash != nil || len(d.Errors) != 0 || d.Lag != nil {
		t.Fatalf("detail: %+v", d)
	}
	var master *monitor.ComponentView
	for i, c := range d.Components {
		if i > 0 && d.Components[i-1].Name >= c.Name {
			t.Fatalf("components not sorted: %+v", d.Components)
		}
		if c.Name == "$master" {
			master = &d.Components[i]
		}
	}
	if master == nil || master.Acked == 0 || master.CompleteLatency == nil || master.CompleteLatency.Count == 0 {
		t.Fatalf("master component: %+v in %+v", master, d.Components)
	}

	// The graph: $master → spout-sentences → b-1 (the planned group),
	// and the coordinator's streams from $master to both.
	if g := d.Graph; g == nil || len(g.Components) != 3 || len(g.Edges) < 3 {
		t.Fatalf("graph: %+v", d.Graph)
	}
	layers := map[string]int{}
	for _, c := range d.Graph.Components {
		layers[c.Name] = c.Layer
		if (c.Kind == "spout") != (c.Name == "$master") || c.Tasks < 1 || c.Parallelism < 1 {
			t.Fatalf("graph component %+v", c)
		}
	}
	if layers["$master"] != 0 || layers["spout-sentences"] != 1 || layers["b-1"] != 2 {
		t.Fatalf("graph layers %v", layers)
	}

	var cd monitor.ComponentDetail
	getJSON(t, ts, "GET", "/api/v1/topologies/words/components/$master", nil, http.StatusOK, &cd)
	if cd.Topology != "words" || cd.Name != "$master" || cd.Acked < master.Acked || cd.Errors == nil {
		t.Fatalf("component: %+v", cd)
	}

	wantError(t, ts, "GET", "/api/v1/topologies/nope", nil, http.StatusNotFound, `no topology named "nope"`)
	wantError(t, ts, "GET", "/api/v1/topologies/nope/components/x", nil, http.StatusNotFound, `no topology named "nope"`)
	wantError(t, ts, "GET", "/api/v1/topologies/words/components/nope", nil, http.StatusNotFound, `no component "nope"`)
	wantError(t, ts, "POST", "/api/v1/topologies/nope/kill", nil, http.StatusNotFound, `no topology named "nope"`)
	wantError(t, ts, "GET", "/api/v1/nothing", nil, http.StatusNotFound, "not found")
	h := wantError(t, ts, "GET", "/api/v1/topologies/words/kill", nil, http.StatusMethodNotAllowed, "Method Not Allowed")
	if h.Get("Allow") != "POST" {
		t.Fatalf("Allow: %q", h.Get("Allow"))
	}
	wantError(t, ts, "DELETE", "/api/v1/topologies/words", nil, http.StatusMethodNotAllowed, "Method Not Allowed")
	wantError(t, ts, "POST", "/api/v1/topologies/words/kill?timeout=soon", nil, http.StatusBadRequest, "positive duration")
	wantError(t, ts, "POST", "/api/v1/topologies/words/activate?timeout=1s", nil, http.StatusBadRequest, "kill only")
}

func TestActions(t *testing.T) {
	ctx := testCtx(t)
	r := wordCount(t, ctx, "words", nil, 0)
	reg := monitor.NewRegistry()
	if err := reg.Add(r, monitor.Options{}); err != nil {
		t.Fatal(err)
	}
	ts := serve(t, reg, monitor.Config{})

	var res monitor.ActionResult
	getJSON(t, ts, "POST", "/api/v1/topologies/words/deactivate", nil, http.StatusOK, &res)
	if res.Topology != "words" || res.Action.Name != "deactivate" || res.Action.Error != "" || res.Status != monitor.StatusRunning {
		t.Fatalf("deactivate: %+v", res)
	}
	var d monitor.TopologyDetail
	getJSON(t, ts, "GET", "/api/v1/topologies/words", nil, http.StatusOK, &d)
	if d.LastAction == nil || d.LastAction.Name != "deactivate" || d.LastAction.Time.IsZero() {
		t.Fatalf("last action: %+v", d.LastAction)
	}
	if d.Active == nil || *d.Active {
		t.Fatalf("active after deactivate: %v", d.Active)
	}
	if v := value(t, scrape(t, ts), "squall_topology_active", map[string]string{"topology": "words"}); v != 0 {
		t.Fatalf("squall_topology_active %v after deactivate", v)
	}
	// The effective configuration: wordCount's settings and the defaults.
	c := d.Config
	if c == nil || c.Trident == nil || c.Ackers != 1 || c.BatchSize != 256 || c.MessageTimeoutSeconds != 30 ||
		c.Trident.MaxBatchesInFlight != 1 || c.Trident.BatchEmitIntervalSeconds != 0.005 ||
		c.Trident.RetryBackoffSeconds != 0.005 || c.Trident.MaxRetryBackoffSeconds != 0.02 ||
		c.Trident.OnCorruptState == "" || c.Trident.Store == "" || c.Trident.SharedCluster {
		t.Fatalf("config: %+v, trident %+v", c, c.Trident)
	}

	// Batches start again after activate.
	getJSON(t, ts, "POST", "/api/v1/topologies/words/activate", nil, http.StatusOK, &res)
	if res.Action.Name != "activate" {
		t.Fatalf("activate: %+v", res)
	}
	getJSON(t, ts, "GET", "/api/v1/topologies/words", nil, http.StatusOK, &d)
	if d.Active == nil || !*d.Active {
		t.Fatalf("active after activate: %v", d.Active)
	}
	if err := r.WaitCommitted(ctx, r.Committed()+2); err != nil {
		t.Fatal(err)
	}

	getJSON(t, ts, "POST", "/api/v1/topologies/words/kill?timeout=20s", nil, http.StatusOK, &res)
	if res.Action.Name != "kill" || res.Action.Error != "" || res.Status != monitor.StatusStopped {
		t.Fatalf("kill: %+v", res)
	}
	select {
	case <-r.Done():
	default:
		t.Fatal("the topology runs after kill")
	}
	wantError(t, ts, "POST", "/api/v1/topologies/words/activate", nil, http.StatusConflict, "stopped")
	// A second kill is harmless.
	getJSON(t, ts, "POST", "/api/v1/topologies/words/kill", nil, http.StatusOK, &res)

	var rd monitor.Readiness
	getJSON(t, ts, "GET", "/readyz", nil, http.StatusServiceUnavailable, &rd)
	if rd.Ready || len(rd.Topologies) != 1 || rd.Topologies[0].Status != monitor.StatusStopped {
		t.Fatalf("readiness after kill: %+v", rd)
	}
	if !reg.Remove("words") || reg.Remove("words") {
		t.Fatal("Remove")
	}
	getJSON(t, ts, "GET", "/readyz", nil, http.StatusOK, &rd)
}

// A halted Trident topology makes the process not ready, and its
// reported errors show with component, task and time.
func TestReadinessHalted(t *testing.T) {
	ctx := testCtx(t)
	var fail atomic.Bool
	fail.Store(true)
	r := wordCount(t, ctx, "failing", &fail, 2)
	reg := monitor.NewRegistry()
	if err := reg.Add(r, monitor.Options{}); err != nil {
		t.Fatal(err)
	}
	ts := serve(t, reg, monitor.Config{})
	select {
	case <-r.Halted():
	case <-ctx.Done():
		t.Fatal("the topology did not halt")
	}
	var rd monitor.Readiness
	getJSON(t, ts, "GET", "/readyz", nil, http.StatusServiceUnavailable, &rd)
	if rd.Ready || len(rd.Topologies) != 1 || rd.Topologies[0].Status != monitor.StatusHalted || rd.Topologies[0].Error == "" {
		t.Fatalf("readiness: %+v", rd)
	}
	var d monitor.TopologyDetail
	getJSON(t, ts, "GET", "/api/v1/topologies/failing", nil, http.StatusOK, &d)
	if d.Batches == nil || !d.Batches.Halted || d.Batches.HaltError == "" || d.Batches.FailedAttempts < 2 {
		t.Fatalf("batches: %+v", d.Batches)
	}
	if len(d.Errors) == 0 {
		t.Fatal("no reported error")
	}
	var e monitor.ErrorView // the split step's report
	for _, x := range d.Errors {
		if x.Component != "$master" && strings.Contains(x.Error, "split: injected failure") {
			e = x
		}
	}
	if e.Component == "" || e.Time.IsZero() {
		t.Fatalf("no reported error of the split step in %+v", d.Errors)
	}
	var cd monitor.ComponentDetail
	getJSON(t, ts, "GET", "/api/v1/topologies/failing/components/"+e.Component, nil, http.StatusOK, &cd)
	if len(cd.Errors) == 0 || cd.ErrorCount == 0 {
		t.Fatalf("component errors: %+v", cd)
	}
}

// Readiness of a tuple-level topology: ready while its worker runs, not
// once it stops.
func TestReadinessTupleLevel(t *testing.T) {
	r := tupleLevel(t, testCtx(t), "plain")
	reg := monitor.NewRegistry()
	ts := serve(t, reg, monitor.Config{})
	var rd monitor.Readiness
	getJSON(t, ts, "GET", "/readyz", nil, http.StatusOK, &rd) // nothing registered
	if err := reg.Add(r, monitor.Options{}); err != nil {
		t.Fatal(err)
	}
	var s monitor.TopologyDetail
	getJSON(t, ts, "GET", "/api/v1/topologies/plain", nil, http.StatusOK, &s)
	if s.Kind != "topology" || s.Batches != nil {
		t.Fatalf("tuple-level detail: %+v", s)
	}
	if s.Active == nil || !*s.Active || s.Config == nil || s.Config.Trident != nil || s.Config.BatchSize != 256 ||
		s.Config.QueueCapacity != 64 || s.Config.RestartMaxBackoffSeconds != 10 {
		t.Fatalf("tuple-level active %v, config %+v", s.Active, s.Config)
	}
	if g := s.Graph; g == nil || len(g.Components) != 1 || g.Components[0] != (monitor.GraphComponentView{Name: "idle", Kind: "spout", Parallelism: 1, Tasks: 1}) || len(g.Edges) != 0 {
		t.Fatalf("tuple-level graph: %+v", s.Graph)
	}
	if s.Status != monitor.StatusRunning {
		t.Fatalf("status %q once the worker opened its spout", s.Status)
	}
	getJSON(t, ts, "GET", "/readyz", nil, http.StatusOK, &rd)
	stop(t, r)
	getJSON(t, ts, "GET", "/readyz", nil, http.StatusServiceUnavailable, &rd)
	if rd.Topologies[0].Status != monitor.StatusStopped {
		t.Fatalf("readiness: %+v", rd)
	}
}

func TestProbesAndVersion(t *testing.T) {
	ts := serve(t, monitor.NewRegistry(), monitor.Config{})
	var h monitor.Health
	getJSON(t, ts, "GET", "/healthz", nil, http.StatusOK, &h)
	if h.Status != "ok" {
		t.Fatalf("healthz: %+v", h)
	}
	var v monitor.Version
	getJSON(t, ts, "GET", "/version", nil, http.StatusOK, &v)
	if v.Module != "github.com/squallstream/squall" || v.GoVersion == "" {
		t.Fatalf("version: %+v", v)
	}
	wantError(t, ts, "POST", "/healthz", nil, http.StatusMethodNotAllowed, "Method Not Allowed")
}
