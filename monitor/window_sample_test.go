package monitor_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/monitor"
	"github.com/squallstream/squall/topology"
)

// The sampler records the counters every interval; the REST answer shows
// their growth over each window. Time is virtual (synctest).
func TestWindowedCounters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeTopology{name: "w", done: make(chan struct{}),
			health: topology.Health{Running: true},
			stats:  topology.Stats{Components: map[string]topology.ComponentStats{"b": {}}}}
		reg := sampledRegistry(t, f)

		// b executes one tuple a second, for 4 hours: the counters move
		// half-way between two samples, so each sample reads them whole.
		time.Sleep(time.Second / 2)
		for i := 1; i <= 4*3600; i++ {
			if i > 1 {
				time.Sleep(time.Second)
			}
			f.mu.Lock()
			f.stats = topology.Stats{Components: map[string]topology.ComponentStats{"b": {Executed: uint64(i), Failed: uint64(i / 60)}}}
			f.mu.Unlock()
		}
		time.Sleep(time.Second / 2) // now: 4 hours after Add, on a sample
		synctest.Wait()

		s, err := monitor.NewServer(reg, monitor.Config{})
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, localRequest("GET", "/api/v1/topologies/w"))
		if rec.Code != http.StatusOK {
			t.Fatalf("%d: %s", rec.Code, rec.Body)
		}
		var d monitor.TopologyDetail
		if err := json.Unmarshal(rec.Body.Bytes(), &d); err != nil {
			t.Fatal(err)
		}
		want := []struct {
			window   string
			seconds  float64
			executed uint64
		}{{"10m", 600, 600}, {"3h", 3 * 3600, 3 * 3600}, {"1d", 4 * 3600, 4 * 3600}, {"all", 4 * 3600, 4 * 3600}}
		if len(d.Windows) != len(want) {
			t.Fatalf("windows: %+v", d.Windows)
		}
		for i, w := range want {
			g := d.Windows[i]
			if g.Window != w.window || g.Seconds != w.seconds || g.Executed != w.executed || g.Failed != w.executed/60 ||
				len(g.Components) != 1 || g.Components[0].Name != "b" || g.Components[0].Executed != w.executed || g.Batches != nil {
				t.Errorf("window %d: %+v, want %s over %vs: %d executed", i, g, w.window, w.seconds, w.executed)
			}
		}

		// The page shows them.
		rec = httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, localRequest("GET", "/ui/topologies/w"))
		for _, want := range []string{"Counters over time", "<td>10m</td><td>10m0s</td>", "<td>3h</td><td>3h0m0s</td>", "<td class=\"n\">600</td>"} {
			if !strings.Contains(rec.Body.String(), want) {
				t.Errorf("the page lacks %q:\n%s", want, rec.Body)
			}
		}
	})
}

// sampledRegistry returns a registry of f whose sampler runs every
// DefaultSampleInterval until the test ends.
func sampledRegistry(t *testing.T, f *fakeTopology) *monitor.Registry {
	t.Helper()
	reg := monitor.NewRegistry()
	if err := reg.Add(f, monitor.Options{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		reg.SampleEvery(ctx, monitor.DefaultSampleInterval)
	}()
	t.Cleanup(func() { cancel(); <-done })
	return reg
}
