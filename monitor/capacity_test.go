package monitor_test

import (
	"bytes"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/squallstream/squall/monitor"
	"github.com/squallstream/squall/topology"
)

// A bolt with two executors that are busy half the time has capacity
// 0.5 over the last 10 minutes; after it goes idle for 10 minutes, 0. The
// execute latency, busy time, executors and transferred counts are
// exported as the runtime reports them. Time is virtual (synctest).
func TestCapacityAndExecuteLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stats := func(busy time.Duration) topology.Stats {
			return topology.Stats{Components: map[string]topology.ComponentStats{
				"b": {Executed: 10, Transferred: 30, Busy: busy, Executors: 2,
					ExecuteLatency: topology.Latency{Count: 10, P50: 2 * time.Millisecond, P99: 5 * time.Millisecond, Max: 6 * time.Millisecond},
					Tasks:          []topology.TaskStats{{Task: 7, Executed: 10, Transferred: 30}}},
				"s": {Emitted: 10, Transferred: 10, Executors: 1},
			}}
		}
		f := &fakeTopology{name: "c", done: make(chan struct{}), health: topology.Health{Running: true}, stats: stats(0)}
		reg := sampledRegistry(t, f)
		s, err := monitor.NewServer(reg, monitor.Config{})
		if err != nil {
			t.Fatal(err)
		}
		scrapeValue := func(name string, labels map[string]string) float64 {
			t.Helper()
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, localRequest("GET", "/metrics"))
			if rec.Code != http.StatusOK {
				t.Fatalf("/metrics: %d", rec.Code)
			}
			p := expfmt.NewTextParser(model.UTF8Validation)
			fams, err := p.TextToMetricFamilies(bytes.NewReader(rec.Body.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			return value(t, fams, name, labels)
		}

		// Busy one second per second over two executors, for 20 minutes,
		// moving half-way between samples.
		var busy time.Duration
		time.Sleep(time.Second / 2)
		for range 20 * 60 {
			time.Sleep(time.Second)
			busy += time.Second
			f.mu.Lock()
			f.stats = stats(busy)
			f.mu.Unlock()
		}
		synctest.Wait()
		b := map[string]string{"topology": "c", "component": "b"}
		if c := scrapeValue("squall_component_capacity", b); math.Abs(c-0.5) > 0.01 {
			t.Fatalf("capacity %v, want 0.5", c)
		}
		if v := scrapeValue("squall_component_busy_seconds_total", b); v != busy.Seconds() {
			t.Fatalf("busy %v, want %v", v, busy.Seconds())
		}
		for q, want := range map[string]float64{"0.5": 0.002, "0.99": 0.005, "1": 0.006} {
			if v := scrapeValue("squall_execute_latency_quantile_seconds", map[string]string{"topology": "c", "component": "b", "quantile": q}); v != want {
				t.Fatalf("execute latency %s = %v, want %v", q, v, want)
			}
		}
		if v := scrapeValue("squall_component_executors", b); v != 2 {
			t.Fatalf("executors %v", v)
		}
		if v := scrapeValue("squall_tuples_transferred_total", map[string]string{"topology": "c", "component": "s"}); v != 10 {
			t.Fatalf("s transferred %v", v)
		}
		if v := scrapeValue("squall_task_tuples_transferred_total", map[string]string{"topology": "c", "component": "b", "task": "7"}); v != 30 {
			t.Fatalf("task 7 transferred %v", v)
		}

		// Idle for 11 minutes: the window no longer holds busy time.
		time.Sleep(11 * time.Minute)
		synctest.Wait()
		if c := scrapeValue("squall_component_capacity", b); c != 0 {
			t.Fatalf("capacity after 11 idle minutes %v, want 0", c)
		}
	})
}

// The latency histograms: buckets, sum and count as the runtime reports
// them, the count never below the last bucket's.
func TestLatencyHistograms(t *testing.T) {
	lat := topology.Latency{Count: 4, P50: time.Millisecond, P99: time.Second, Max: time.Second, Sum: 1500 * time.Millisecond,
		Buckets: []topology.LatencyBucket{{Below: 1 << 20, Count: 1}, {Below: 1 << 30, Count: 3}, {Below: 1 << 36, Count: 5}}}
	f := &fakeTopology{name: "h", done: make(chan struct{}), health: topology.Health{Running: true},
		stats: topology.Stats{Components: map[string]topology.ComponentStats{"s": {CompleteLatency: lat}, "b": {ExecuteLatency: lat, Executors: 1}}}}
	reg := monitor.NewRegistry()
	if err := reg.Add(f, monitor.Options{}); err != nil {
		t.Fatal(err)
	}
	fams := scrape(t, serve(t, reg, monitor.Config{}))
	for name, comp := range map[string]string{"squall_complete_latency_seconds": "s", "squall_execute_latency_seconds": "b"} {
		fam := fams[name]
		if fam == nil || fam.GetType() != dto.MetricType_HISTOGRAM || len(fam.GetMetric()) != 1 {
			t.Fatalf("%s: %v", name, fam)
		}
		m := fam.GetMetric()[0]
		h := m.GetHistogram()
		if h.GetSampleCount() != 5 || h.GetSampleSum() != 1.5 {
			t.Fatalf("%s: count %d sum %v, want 5 and 1.5", name, h.GetSampleCount(), h.GetSampleSum())
		}
		want := map[float64]uint64{float64(1<<20) / 1e9: 1, float64(1<<30) / 1e9: 3, float64(1<<36) / 1e9: 5}
		n := 0
		for _, b := range h.GetBucket() {
			if math.IsInf(b.GetUpperBound(), 1) {
				if b.GetCumulativeCount() != 5 {
					t.Fatalf("%s: +Inf bucket %d", name, b.GetCumulativeCount())
				}
				continue
			}
			n++
			if w, ok := want[b.GetUpperBound()]; !ok || w != b.GetCumulativeCount() {
				t.Fatalf("%s: bucket %v = %d", name, b.GetUpperBound(), b.GetCumulativeCount())
			}
		}
		if n != 3 {
			t.Fatalf("%s: %d buckets", name, n)
		}
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["component"] != comp || labels["topology"] != "h" {
			t.Fatalf("%s labels %v", name, labels)
		}
	}
}
