package topology

import (
	"testing"
	"time"
)

// runConstWorkers runs the topology of runConstTopology (const spout -> id
// bolt -> null bolt, tracked) as two workers over loopback TCP in this
// process: the spout in worker a, both bolts and the acker in worker b.
// Every tuple and init goes from a to b, every outcome from b to a.
func runConstWorkers(b *testing.B, n int) time.Duration {
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
	cluster := runConstWorkers(b, b.N)
	lr, cr := float64(b.N)/local.Seconds(), float64(b.N)/cluster.Seconds()
	b.ReportMetric(cr, "trees/s")
	b.ReportMetric(lr, "inproc-trees/s")
	b.ReportMetric(cr/lr, "ratio")
}
