package nimbus

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The nimbus's metrics are declared once, in clusterFigures: name, help,
// type, labels and how the value is read from a clusterReading. The
// collector (Describe and Collect) is derived from the declarations;
// docs/operations.md lists every name (a test checks it).

// clusterFigure declares one metric of the cluster view.
type clusterFigure struct {
	name   string
	help   string
	kind   prometheus.ValueType
	labels []string
	// fromEtcd says the figure is read from the cluster's state in etcd;
	// it is left out of a scrape whose read failed.
	fromEtcd bool
	// series reads the figure's series: emit takes a value and the
	// values of labels.
	series func(r *clusterReading, emit func(v float64, labels ...string))
}

// clusterReading is what one scrape reads: this nimbus's own state, and
// the cluster's from etcd (Err when that read failed).
type clusterReading struct {
	ID      string
	Leading bool
	Refused int64
	Info    ClusterInfo
	Err     error
}

// clusterFigures are the nimbus's metrics: the one place to add one.
func clusterFigures() []clusterFigure {
	one := func(f func(r *clusterReading) float64) func(*clusterReading, func(float64, ...string)) {
		return func(r *clusterReading, emit func(float64, ...string)) { emit(f(r)) }
	}
	return []clusterFigure{
		{name: "squall_leader", help: "1 if this nimbus leads the cluster, else 0.",
			kind: prometheus.GaugeValue, labels: []string{"nimbus"},
			series: func(r *clusterReading, emit func(float64, ...string)) { emit(bool01(r.Leading), r.ID) }},
		{name: "squall_cluster_read_errors", help: "1 if this scrape could not read the cluster's state from etcd.",
			kind: prometheus.GaugeValue, series: one(func(r *clusterReading) float64 { return bool01(r.Err != nil) })},
		{name: "squall_cluster_refused_total", help: "Assignments this nimbus found unsigned or badly signed, and assigned afresh.",
			kind: prometheus.CounterValue, series: one(func(r *clusterReading) float64 { return float64(r.Refused) })},
		{name: "squall_cluster_nimbuses", help: "Nimbuses campaigning for leadership.",
			kind: prometheus.GaugeValue, fromEtcd: true,
			series: one(func(r *clusterReading) float64 { return float64(len(r.Info.Nimbuses)) })},
		{name: "squall_cluster_supervisors", help: "Live supervisors.",
			kind: prometheus.GaugeValue, fromEtcd: true,
			series: one(func(r *clusterReading) float64 { return float64(len(r.Info.Supervisors)) })},
		{name: "squall_cluster_slots", help: "Worker slots of the live supervisors, by state.",
			kind: prometheus.GaugeValue, labels: []string{"state"}, fromEtcd: true,
			series: func(r *clusterReading, emit func(float64, ...string)) {
				var used, free float64
				for _, s := range r.Info.Supervisors {
					for _, sl := range s.Slots {
						if sl.Topology == "" {
							free++
						} else {
							used++
						}
					}
				}
				emit(used, "used")
				emit(free, "free")
			}},
		{name: "squall_cluster_workers", help: "Live worker processes of a topology, and those assigned.",
			kind: prometheus.GaugeValue, labels: []string{"topology", "state"}, fromEtcd: true,
			series: func(r *clusterReading, emit func(float64, ...string)) {
				for _, t := range r.Info.Topologies {
					assigned := 0
					if t.Assignment != nil {
						assigned = len(t.Assignment.Workers)
					}
					emit(float64(assigned), t.Spec.Topology, "assigned")
					emit(float64(len(t.Workers)), t.Spec.Topology, "running")
				}
			}},
		{name: "squall_cluster_worker_crashes", help: "Crashes of a topology's workers, as their supervisors report them.",
			kind: prometheus.GaugeValue, labels: []string{"topology"}, fromEtcd: true,
			series: func(r *clusterReading, emit func(float64, ...string)) {
				for _, t := range r.Info.Topologies {
					crashes := 0
					for _, cr := range t.Crashes {
						crashes += cr.Crashes
					}
					emit(float64(crashes), t.Spec.Topology)
				}
			}},
	}
}

// figureCollector exports declared figures, read at each scrape.
type figureCollector struct {
	figs  []clusterFigure
	descs []*prometheus.Desc // figs' descriptors, by index
	read  func() *clusterReading
}

func newFigureCollector(figs []clusterFigure, read func() *clusterReading) figureCollector {
	c := figureCollector{figs: slices.Clone(figs), read: read}
	for _, f := range figs {
		c.descs = append(c.descs, prometheus.NewDesc(f.name, f.help, f.labels, nil))
	}
	return c
}

// Describe sends every declared figure's descriptor.
func (c figureCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

// Collect reads the cluster once and sends every declared figure's
// series.
func (c figureCollector) Collect(ch chan<- prometheus.Metric) {
	r := c.read()
	for i, f := range c.figs {
		if f.fromEtcd && r.Err != nil {
			continue
		}
		f.series(r, func(v float64, labels ...string) {
			ch <- prometheus.MustNewConstMetric(c.descs[i], f.kind, v, labels...)
		})
	}
}

// readCluster reads what a scrape exports.
func (n *Nimbus) readCluster() *clusterReading {
	r := &clusterReading{ID: n.cfg.ID, Leading: n.cand.Current() != nil, Refused: n.refused.Load()}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r.Info, r.Err = n.Cluster(ctx)
	return r
}

// metricsHandler serves the cluster's figures in Prometheus's format,
// read from etcd at each scrape.
func (n *Nimbus) metricsHandler() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(newFigureCollector(clusterFigures(), n.readCluster), n.guard.Collector())
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}

func bool01(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
