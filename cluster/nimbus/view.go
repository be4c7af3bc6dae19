package nimbus

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/squallstream/squall/cluster/leader"
	"github.com/squallstream/squall/cluster/meta"
)

// ClusterInfo is the cluster as a nimbus reads it from etcd: the answer of
// GET /api/v1/cluster, which any nimbus serves.
type ClusterInfo struct {
	Nimbus      string           `json:"nimbus"`   // the nimbus that answered
	Leader      string           `json:"leader"`   // "" while none leads
	Nimbuses    []string         `json:"nimbuses"` // those campaigning (holding every active topology's code)
	Supervisors []SupervisorView `json:"supervisors"`
	Topologies  []TopologyInfo   `json:"topologies"`
}

// SupervisorView is a live supervisor and what runs in its slots.
type SupervisorView struct {
	ID     string     `json:"id"`
	PID    int        `json:"pid"`
	LogURL string     `json:"log_url,omitempty"` // its workers' logs: LogURL/logs/<port>
	Slots  []SlotView `json:"slots"`
}

// SlotView is one slot: free, or the worker assigned to it (Topology,
// Share and Epoch) and, once it registered, the live worker process.
type SlotView struct {
	Port     int    `json:"port"`
	Topology string `json:"topology,omitempty"`
	Share    int    `json:"share"`
	Epoch    int64  `json:"epoch,omitempty"`
	PID      int    `json:"pid,omitempty"`
	Addr     string `json:"addr,omitempty"`
	Monitor  string `json:"monitor,omitempty"` // the worker's monitor URL
}

// Cluster reads the cluster's state. Any nimbus answers.
func (n *Nimbus) Cluster(ctx context.Context) (ClusterInfo, error) {
	out := ClusterInfo{Nimbus: n.cfg.ID}
	ts, err := n.List(ctx)
	if err != nil {
		return out, err
	}
	out.Topologies = ts
	if out.Leader, err = leader.LeaderID(ctx, n.cfg.Client, n.keys.Leader()); err != nil {
		return out, err
	}
	cands, err := n.cfg.Client.Get(ctx, n.keys.Leader()+"/", clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend))
	if err != nil {
		return out, err
	}
	for _, kv := range cands.Kvs {
		out.Nimbuses = append(out.Nimbuses, string(kv.Value))
	}
	sups, err := n.cfg.Client.Get(ctx, n.keys.Supervisors(), clientv3.WithPrefix())
	if err != nil {
		return out, err
	}
	for _, kv := range sups.Kvs {
		var s meta.SupervisorInfo
		if err := meta.Decode(string(kv.Key), kv.Value, &s); err != nil {
			return out, err
		}
		v := SupervisorView{ID: s.ID, PID: s.PID, LogURL: s.LogURL}
		for _, port := range s.Ports {
			v.Slots = append(v.Slots, slotView(ts, meta.Slot{Supervisor: s.ID, Port: port}))
		}
		out.Supervisors = append(out.Supervisors, v)
	}
	slices.SortFunc(out.Supervisors, func(a, b SupervisorView) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// slotView describes slot from the topologies' assignments and workers.
func slotView(ts []TopologyInfo, slot meta.Slot) SlotView {
	v := SlotView{Port: slot.Port, Share: -1}
	for _, t := range ts {
		if t.Assignment == nil {
			continue
		}
		if share := t.Assignment.Share(slot); share >= 0 {
			v.Topology, v.Share, v.Epoch = t.Spec.Topology, share, t.Assignment.Epoch
			for _, w := range t.Workers {
				if w.Slot == slot {
					v.PID, v.Addr, v.Monitor = w.PID, w.Addr, w.MonitorURL
				}
			}
		}
	}
	return v
}

// metricsHandler serves the cluster's figures in Prometheus's format,
// read from etcd at each scrape.
func (n *Nimbus) metricsHandler() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(clusterCollector{n}, n.guard.Collector(), refusedCollector{n})
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}

type clusterCollector struct{ n *Nimbus }

var (
	leaderDesc = prometheus.NewDesc("squall_leader", "1 if this nimbus leads the cluster, else 0.", []string{"nimbus"}, nil)
	nimbusDesc = prometheus.NewDesc("squall_cluster_nimbuses", "Nimbuses campaigning for leadership.", nil, nil)
	supDesc    = prometheus.NewDesc("squall_cluster_supervisors", "Live supervisors.", nil, nil)
	slotsDesc  = prometheus.NewDesc("squall_cluster_slots", "Worker slots of the live supervisors, by state.", []string{"state"}, nil)
	workerDesc = prometheus.NewDesc("squall_cluster_workers", "Live worker processes of a topology, and those assigned.",
		[]string{"topology", "state"}, nil)
	crashDesc = prometheus.NewDesc("squall_cluster_worker_crashes", "Crashes of a topology's workers, as their supervisors report them.",
		[]string{"topology"}, nil)
	readDesc = prometheus.NewDesc("squall_cluster_read_errors", "1 if this scrape could not read the cluster's state from etcd.", nil, nil)
)

func (clusterCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{leaderDesc, nimbusDesc, supDesc, slotsDesc, workerDesc, crashDesc, readDesc} {
		ch <- d
	}
}

func (c clusterCollector) Collect(ch chan<- prometheus.Metric) {
	leading := 0.0
	if c.n.cand.Current() != nil {
		leading = 1
	}
	ch <- prometheus.MustNewConstMetric(leaderDesc, prometheus.GaugeValue, leading, c.n.cfg.ID)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	info, err := c.n.Cluster(ctx)
	failed := 0.0
	if err != nil {
		failed = 1
	}
	ch <- prometheus.MustNewConstMetric(readDesc, prometheus.GaugeValue, failed)
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(nimbusDesc, prometheus.GaugeValue, float64(len(info.Nimbuses)))
	ch <- prometheus.MustNewConstMetric(supDesc, prometheus.GaugeValue, float64(len(info.Supervisors)))
	var used, free float64
	for _, s := range info.Supervisors {
		for _, sl := range s.Slots {
			if sl.Topology == "" {
				free++
			} else {
				used++
			}
		}
	}
	ch <- prometheus.MustNewConstMetric(slotsDesc, prometheus.GaugeValue, used, "used")
	ch <- prometheus.MustNewConstMetric(slotsDesc, prometheus.GaugeValue, free, "free")
	for _, t := range info.Topologies {
		assigned := 0
		if t.Assignment != nil {
			assigned = len(t.Assignment.Workers)
		}
		crashes := 0
		for _, cr := range t.Crashes {
			crashes += cr.Crashes
		}
		ch <- prometheus.MustNewConstMetric(workerDesc, prometheus.GaugeValue, float64(assigned), t.Spec.Topology, "assigned")
		ch <- prometheus.MustNewConstMetric(workerDesc, prometheus.GaugeValue, float64(len(t.Workers)), t.Spec.Topology, "running")
		ch <- prometheus.MustNewConstMetric(crashDesc, prometheus.GaugeValue, float64(crashes), t.Spec.Topology)
	}
}

var refusedDesc = prometheus.NewDesc("squall_cluster_refused_total",
	"Assignments this nimbus found unsigned or badly signed, and assigned afresh.", nil, nil)

// refusedCollector exports the assignments the leader refused.
type refusedCollector struct{ n *Nimbus }

func (refusedCollector) Describe(ch chan<- *prometheus.Desc) { ch <- refusedDesc }

func (c refusedCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(refusedDesc, prometheus.CounterValue, float64(c.n.refused.Load()))
}
