package httpguard

import "github.com/prometheus/client_golang/prometheus"

// Collector returns a Prometheus collector of g's refusals:
// squall_http_refused_total{server, reason}, with server g's name as a
// constant label, so the guards of several servers can share a registry.
func (g *Guard) Collector() prometheus.Collector {
	return refusalCollector{g: g, desc: prometheus.NewDesc("squall_http_refused_total",
		"HTTP requests refused by the server's guards, by reason: host (Host header names another server), cross_origin, unauthenticated, forbidden, body_too_large (refused or cut), busy (concurrency budget full).",
		[]string{"reason"}, prometheus.Labels{"server": g.server})}
}

type refusalCollector struct {
	g    *Guard
	desc *prometheus.Desc
}

func (c refusalCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c refusalCollector) Collect(ch chan<- prometheus.Metric) {
	for _, r := range Reasons() {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, float64(c.g.refusals.Count(r)), r.String())
	}
}
