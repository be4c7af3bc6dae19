package monitor_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/squallstream/squall/monitor"
	"github.com/squallstream/squall/topology"
)

// fakeTopology is a Topology whose figures a test sets.
type fakeTopology struct {
	name string
	done chan struct{}

	mu     sync.Mutex
	health topology.Health
	stats  topology.Stats
	errs   []topology.ReportedError
}

func (f *fakeTopology) Name() string { return f.name }
func (f *fakeTopology) Stats() topology.Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stats
}
func (f *fakeTopology) Health() topology.Health {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.health
}
func (f *fakeTopology) Errors() []topology.ReportedError {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.errs
}
func (f *fakeTopology) Pending() int64             { return 0 }
func (f *fakeTopology) Activate()                  {}
func (f *fakeTopology) Deactivate()                {}
func (f *fakeTopology) Stop(context.Context) error { return nil }
func (f *fakeTopology) Done() <-chan struct{}      { return f.done }

// A crashed worker waiting for its restart: not ready, the crash in the
// detail and in the metrics.
func TestRestartingWorker(t *testing.T) {
	at := time.Date(2026, 1, 5, 9, 30, 0, 0, time.UTC)
	f := &fakeTopology{name: "crashy", done: make(chan struct{}),
		health: topology.Health{Running: false, Crashes: 2, LastCrash: &topology.Crash{
			Component: "count", Task: 4, Time: at, Err: errors.New("boom"), Stack: []byte("goroutine 7 [running]:"),
		}},
		stats: topology.Stats{Components: map[string]topology.ComponentStats{"count": {Executed: 5, Errors: 1}}},
		errs:  []topology.ReportedError{{Component: "count", Task: 4, Time: at, Err: errors.New("bad row")}},
	}
	reg := monitor.NewRegistry()
	if err := reg.Add(f, monitor.Options{}); err != nil {
		t.Fatal(err)
	}
	ts := serve(t, reg, monitor.Config{})

	var rd monitor.Readiness
	getJSON(t, ts, "GET", "/readyz", nil, http.StatusServiceUnavailable, &rd)
	if rd.Topologies[0].Status != monitor.StatusRestarting {
		t.Fatalf("readiness: %+v", rd)
	}
	var d monitor.TopologyDetail
	getJSON(t, ts, "GET", "/api/v1/topologies/crashy", nil, http.StatusOK, &d)
	c := d.Worker.LastCrash
	if d.Worker.Running || d.Worker.Crashes != 2 || c == nil || c.Component != "count" || c.Task != 4 ||
		!c.Time.Equal(at) || c.Error != "boom" || c.Stack == "" {
		t.Fatalf("worker: %+v, crash %+v", d.Worker, c)
	}
	if d.ErrorCount != 1 || len(d.Errors) != 1 || d.Errors[0].Error != "bad row" || d.Errors[0].Task != 4 {
		t.Fatalf("errors: %d %+v", d.ErrorCount, d.Errors)
	}
	fams := scrape(t, ts)
	crashy := map[string]string{"topology": "crashy"}
	if v := value(t, fams, "squall_worker_restarts_total", crashy); v != 2 {
		t.Fatalf("restarts %v", v)
	}
	if v := value(t, fams, "squall_worker_running", crashy); v != 0 {
		t.Fatalf("worker running %v", v)
	}
	if v := value(t, fams, "squall_topology_ready", crashy); v != 0 {
		t.Fatalf("ready %v", v)
	}
	if fams["squall_committed_txid"] != nil {
		t.Fatal("batch metrics for a tuple-level topology")
	}

	// Restarted: ready again.
	f.mu.Lock()
	f.health.Running = true
	f.mu.Unlock()
	getJSON(t, ts, "GET", "/readyz", nil, http.StatusOK, &rd)
	close(f.done)
	getJSON(t, ts, "GET", "/readyz", nil, http.StatusServiceUnavailable, &rd)
}
