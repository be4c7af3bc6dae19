package nimbus

import (
	"context"
	"slices"
	"strings"

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
