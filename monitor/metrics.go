package monitor

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/transport"
	"github.com/squallstream/squall/trident"
)

// TransportCounter reports a cluster-mode worker's transport server
// counters (false when it has none); the registry finds it by type
// assertion. *topology.Running implements it.
type TransportCounter interface {
	TransportStats() (transport.ServerStats, bool)
}

var (
	_ TransportCounter = (*topology.Running)(nil)
	_ TransportCounter = (*trident.Running)(nil)
)

// collector exports the registry's figures, read at scrape time.
type collector struct {
	reg *Registry
}

// Collector returns a prometheus.Collector that reads the registered
// topologies' figures at every scrape. Register it with a registry of
// your own (prometheus.NewRegistry); the server does so with its own.
// docs/operations.md lists the metrics; figures_decl.go declares them.
func (g *Registry) Collector() prometheus.Collector { return collector{reg: g} }

// Describe sends every declared figure's descriptor: the set is fixed.
func (c collector) Describe(ch chan<- *prometheus.Desc) {
	f := c.reg.figs
	describe(ch, f.topology)
	describe(ch, f.component)
	describe(ch, f.task)
	describe(ch, f.state)
}

// Collect reads every registered topology's figures.
func (c collector) Collect(ch chan<- prometheus.Metric) {
	for _, e := range c.reg.all() {
		collectEntry(ch, c.reg.figs, e.read())
	}
}

// collectEntry sends the series of every declared figure of one
// topology, read once.
func collectEntry(ch chan<- prometheus.Metric, f *figureSet, r *reading) {
	name := r.e.t.Name()
	collect(ch, f.topology, r, name)
	for comp, s := range r.stats.Components {
		collect(ch, f.component, componentReading{top: r, name: comp, stats: s}, name, comp)
		for _, t := range s.Tasks {
			collect(ch, f.task, t, name, comp, strconv.Itoa(int(t.Task)))
		}
	}
	for _, s := range r.states() {
		collect(ch, f.state, s, name, s.Name, s.Component)
	}
}

// capacity returns the share of window w that comp's executors spent
// executing; false if w covers no time.
func capacity(w *window, comp string, executors int) (float64, bool) {
	if w.Span <= 0 || executors <= 0 {
		return 0, false
	}
	return w.Growth.Components[comp].Busy.Seconds() / (w.Span.Seconds() * float64(executors)), true
}

// histogram returns l as a Prometheus histogram: its buckets count the
// latencies below their bounds, cumulative by construction. The count is
// at least the last bucket's, since the figures are read while latencies
// are recorded.
func histogram(d *prometheus.Desc, l topology.Latency, labels ...string) prometheus.Metric {
	buckets := make(map[float64]uint64, len(l.Buckets))
	count := l.Count
	for _, b := range l.Buckets {
		buckets[b.Below.Seconds()] = b.Count
		count = max(count, b.Count)
	}
	return prometheus.MustNewConstHistogram(d, count, l.Sum.Seconds(), buckets, labels...)
}

// quantiles reports l's quantiles, the maximum as quantile 1.
func quantiles(l topology.Latency, f func(q string, seconds float64)) {
	f("0.5", l.P50.Seconds())
	f("0.99", l.P99.Seconds())
	f("1", l.Max.Seconds())
}

func bool01(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
