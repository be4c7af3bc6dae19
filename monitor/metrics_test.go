package monitor_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/squallstream/squall/monitor"
	"github.com/squallstream/squall/txn"
)

// scrape gets /metrics and parses it with the Prometheus text parser.
func scrape(t *testing.T, ts *httptest.Server) map[string]*dto.MetricFamily {
	t.Helper()
	code, _, body := call(t, ts, "GET", "/metrics", map[string]string{"Accept": "text/plain"})
	if code != http.StatusOK {
		t.Fatalf("/metrics: status %d: %s", code, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parsing /metrics: %v\n%s", err, body)
	}
	return fams
}

// value returns the value of the series of family name whose labels
// include want; it fails the test if there is none.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	t.Helper()
	f := fams[name]
	if f == nil {
		t.Fatalf("no metric family %s", name)
	}
next:
	for _, m := range f.GetMetric() {
		labels := make(map[string]string)
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if labels[k] != v {
				continue next
			}
		}
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			return m.GetCounter().GetValue()
		case dto.MetricType_GAUGE:
			return m.GetGauge().GetValue()
		default:
			t.Fatalf("%s: unexpected type %v", name, f.GetType())
		}
	}
	t.Fatalf("no series of %s with labels %v", name, want)
	return 0
}

func TestMetricsMoveAsBatchesCommit(t *testing.T) {
	ctx := testCtx(t)
	r := wordCount(t, ctx, "words", nil, 0)
	reg := monitor.NewRegistry()
	lag := monitor.LagFunc(func() []monitor.PartitionLag {
		return []monitor.PartitionLag{{Partition: "events@0", Next: 40, LogEnd: 42, Lag: 2}}
	})
	sources := monitor.SourceStatsFunc(func() monitor.SourceCounters { return monitor.SourceCounters{DeadLettered: 7} })
	if err := reg.Add(r, monitor.Options{Lag: lag, Sources: sources}); err != nil {
		t.Fatal(err)
	}
	ts := serve(t, reg, monitor.Config{})
	if err := r.WaitCommitted(ctx, 2); err != nil {
		t.Fatal(err)
	}
	words := map[string]string{"topology": "words"}
	master := map[string]string{"topology": "words", "component": "$master"}

	before := scrape(t, ts)
	txid := value(t, before, "squall_committed_txid", words)
	committed := value(t, before, "squall_batches_committed_total", words)
	acked := value(t, before, "squall_tuples_acked_total", master)
	if txid < 2 || committed < 2 || acked == 0 {
		t.Fatalf("before: txid %v, committed %v, master acked %v", txid, committed, acked)
	}
	for name, labels := range map[string]map[string]string{
		"squall_topology_ready":                    words,
		"squall_worker_running":                    words,
		"squall_owner_generation":                  words,
		"squall_topology_halted":                   words,
		"squall_worker_restarts_total":             words,
		"squall_batches_failed_total":              words,
		"squall_batches_emitted_total":             words,
		"squall_batches_replayed_total":            words,
		"squall_commit_latency_quantile_seconds":   {"topology": "words", "quantile": "0.5"},
		"squall_dead_letters_total":                words,
		"squall_quarantined_total":                 words,
		"squall_pending_trees":                     words,
		"squall_batches_in_flight":                 words,
		"squall_tuples_emitted_total":              master,
		"squall_tuples_executed_total":             master,
		"squall_tuples_failed_total":               master,
		"squall_tuples_timed_out_total":            master,
		"squall_component_errors_total":            master,
		"squall_batch_latency_quantile_seconds":    {"topology": "words", "quantile": "0.99"},
		"squall_complete_latency_quantile_seconds": {"topology": "words", "component": "$master", "quantile": "1"},
		"squall_kafka_consumer_lag":                {"topology": "words", "partition": "events@0"},
	} {
		value(t, before, name, labels)
	}
	if v := value(t, before, "squall_topology_ready", words); v != 1 {
		t.Fatalf("ready = %v", v)
	}
	if v := value(t, before, "squall_dead_letters_total", map[string]string{"topology": "words", "origin": "source"}); v != 7 {
		t.Fatalf("source dead letters = %v", v)
	}
	if v := value(t, before, "squall_dead_letters_total", map[string]string{"topology": "words", "origin": "operations"}); v != 0 {
		t.Fatalf("operations dead letters = %v", v)
	}
	if v := value(t, before, "squall_fencing_rejections_total", words); v != 0 {
		t.Fatalf("fencing rejections = %v", v)
	}
	if v := value(t, before, "squall_state_writes_total", words); v == 0 {
		t.Fatal("no state writes after two commits")
	}
	if v := value(t, before, "squall_state_reads_total", words); v == 0 {
		t.Fatal("no state reads after two commits")
	}
	if v := value(t, before, "squall_state_errors_total", words); v != 0 {
		t.Fatalf("state errors = %v", v)
	}
	var d monitor.TopologyDetail
	getJSON(t, ts, "GET", "/api/v1/topologies/words", nil, http.StatusOK, &d)
	for _, name := range []string{"squall_batch_latency_seconds", "squall_commit_latency_seconds", "squall_complete_latency_seconds"} {
		f := before[name]
		if f == nil || f.GetType() != dto.MetricType_HISTOGRAM || len(f.GetMetric()) == 0 {
			t.Fatalf("%s: %v", name, f)
		}
		if h := f.GetMetric()[0].GetHistogram(); h.GetSampleCount() == 0 || h.GetSampleSum() <= 0 {
			t.Fatalf("%s: count %d, sum %v", name, h.GetSampleCount(), h.GetSampleSum())
		}
	}
	if h := before["squall_batch_latency_seconds"].GetMetric()[0].GetHistogram(); float64(h.GetSampleCount()) < committed {
		t.Fatalf("batch latency histogram counts %d, %v batches committed", h.GetSampleCount(), committed)
	}
	if d.Sources == nil || d.Sources.DeadLettered != 7 {
		t.Fatalf("sources %+v", d.Sources)
	}
	if len(d.States) != 1 || d.States[0].Writes == 0 || d.States[0].Component == "" ||
		d.States[0].Name != fams1State(before) {
		t.Fatalf("states %+v", d.States)
	}
	if v := value(t, before, "squall_topology_active", words); v != 1 {
		t.Fatalf("active = %v", v)
	}
	if v := value(t, before, "squall_batches_in_flight", words); v < 0 || v > 1 {
		t.Fatalf("in flight = %v with MaxBatchesInFlight 1", v)
	}
	if v := value(t, before, "squall_kafka_consumer_lag", words); v != 2 {
		t.Fatalf("lag = %v", v)
	}
	if fams := before["go_goroutines"]; fams == nil {
		t.Fatal("no Go runtime metrics")
	}

	// Three more commits move the counters.
	if err := r.WaitCommitted(ctx, txn.TxID(txid)+3); err != nil {
		t.Fatal(err)
	}
	after := scrape(t, ts)
	if v := value(t, after, "squall_committed_txid", words); v < txid+3 {
		t.Fatalf("committed txid %v after waiting for %v", v, txid+3)
	}
	if v := value(t, after, "squall_batches_committed_total", words); v < committed+3 {
		t.Fatalf("batches committed %v, was %v", v, committed)
	}
	if v := value(t, after, "squall_batches_emitted_total", words); v < committed+3 {
		t.Fatalf("batches emitted %v, fewer than the %v committed", v, committed+3)
	}
	if v := value(t, after, "squall_tuples_acked_total", master); v <= acked {
		t.Fatalf("master acked %v, was %v", v, acked)
	}
}

// The collector registers in a registry of the caller's; a second server
// over the same one refuses to register it twice.
func TestOwnMetricsRegistry(t *testing.T) {
	reg := monitor.NewRegistry()
	own := prometheus.NewRegistry()
	if _, err := monitor.NewServer(reg, monitor.Config{Metrics: own}); err != nil {
		t.Fatal(err)
	}
	if _, err := monitor.NewServer(reg, monitor.Config{Metrics: own}); err == nil {
		t.Fatal("the collector registered twice")
	}
}

// fams1State returns the state label of the first squall_state_writes_total
// series.
func fams1State(fams map[string]*dto.MetricFamily) string {
	for _, m := range fams["squall_state_writes_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "state" {
				return l.GetValue()
			}
		}
	}
	return ""
}
