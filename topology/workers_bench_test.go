package topology

import (
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"
)

// runConstWorkers runs the topology of runConstTopology (const spout -> id
// bolt -> null bolt, tracked) as two workers over loopback TCP in this
// process: the spout in worker a, both bolts and the acker in worker b.
// Every tuple and init goes from a to b, every outcome from b to a. tune,
// if set, changes each worker's spec (mutual TLS).
func runConstWorkers(b *testing.B, n int, tune func(WorkerID, *WorkerSpec)) time.Duration {
	done := make(chan struct{})
	spout := &constSpout{limit: n, tracked: true, done: done}
	tb := NewBuilder()
	tb.Spout("spout", func() Spout { return spout }).Output("value")
	tb.Bolt("id", boltFunc(identity).newBolt).Output("value").Input("spout", LocalOrShuffle())
	tb.Bolt("null", func() Bolt { return &nullBolt{} }).Input("id", LocalOrShuffle())
	topo, err := tb.Build()
	if err != nil {
		b.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.MaxSpoutPending = benchMaxSpoutPending
	ws := newWorkers(b, topo, cfg, nil, map[string]WorkerID{"spout": "a", "id": "b", "null": "b", ackerComponent: "b"})
	// The transport logs to slog.Default(): connections at info level, a
	// peer not up yet at warning level. Only errors go between the figures.
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	ws.tune = func(w WorkerID, spec *WorkerSpec) {
		spec.Server.Logger, spec.Client.Logger = quiet, quiet
		if tune != nil {
			tune(w, spec)
		}
	}
	start := time.Now()
	ws.start("b")
	ws.start("a")
	<-done
	elapsed := time.Since(start)
	ws.stopAll()
	return elapsed
}

// BenchmarkClusterAcked: acked trees per second with the spout in one
// worker and the bolts and the acker in another, over loopback TCP, and
// the same topology in one process (BenchmarkTopologyAcked's) measured in
// the same run; ratio is cluster / in-process. One op is one tree in each
// of the two runs.
func BenchmarkClusterAcked(b *testing.B) {
	b.ReportAllocs()
	local, _ := runConstTopology(b, b.N, true)
	cluster := runConstWorkers(b, b.N, nil)
	lr, cr := float64(b.N)/local.Seconds(), float64(b.N)/cluster.Seconds()
	b.ReportMetric(cr, "trees/s")
	b.ReportMetric(lr, "inproc-trees/s")
	b.ReportMetric(cr/lr, "ratio")
}

// BenchmarkClusterAckedTLS: BenchmarkClusterAcked's two workers with
// their connection over mutual TLS (TLS 1.3, ECDSA P-256 certificates of
// a test CA, VerifyPeer checking the peer's name), and over plain TCP in
// the same run; ratio is TLS / plain. One op is one tree in each of the
// two runs. The handshakes are included: they happen once per run.
func BenchmarkClusterAckedTLS(b *testing.B) {
	b.ReportAllocs()
	ca := newClusterCA(b)
	plain := runConstWorkers(b, b.N, nil)
	secure := runConstWorkers(b, b.N, ca.mutualTLS(b, strings.ReplaceAll(b.Name(), "/", "-")))
	pr, sr := float64(b.N)/plain.Seconds(), float64(b.N)/secure.Seconds()
	b.ReportMetric(sr, "trees/s")
	b.ReportMetric(pr, "plain-trees/s")
	b.ReportMetric(sr/pr, "ratio")
}
