package nimbus

import (
	"errors"
	"os"
	"regexp"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/squallstream/squall/cluster/meta"
)

// The collector is derived from the declarations: every declared figure
// is described and collected, and one declared in the test shows up; a
// failed etcd read leaves out exactly the figures read from etcd.
func TestCollectorFromDeclarations(t *testing.T) {
	figs := append(clusterFigures(), clusterFigure{name: "squall_test_extra", help: "A figure of the test.",
		kind: prometheus.GaugeValue, fromEtcd: true,
		series: func(r *clusterReading, emit func(float64, ...string)) { emit(float64(len(r.Info.Topologies))) }})
	r := &clusterReading{ID: "n1", Leading: true, Refused: 2, Info: ClusterInfo{
		Supervisors: []SupervisorView{{ID: "s1", Slots: []SlotView{{Port: 1, Topology: "wc"}, {Port: 2}}}},
		Topologies:  []TopologyInfo{{Spec: meta.Spec{Topology: "wc"}}},
	}}
	c := newFigureCollector(figs, func() *clusterReading { return r })
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	got := gathered(t, reg)
	for _, f := range figs {
		if !got[f.name] {
			t.Errorf("%s: declared, not collected", f.name)
		}
	}
	if v := gaugeOf(t, reg, "squall_test_extra"); v != 1 {
		t.Errorf("squall_test_extra = %v, want 1", v)
	}
	if v := gaugeOf(t, reg, "squall_cluster_supervisors"); v != 1 {
		t.Errorf("squall_cluster_supervisors = %v, want 1", v)
	}

	r.Err = errors.New("etcd down")
	got = gathered(t, reg)
	for _, f := range figs {
		if got[f.name] == f.fromEtcd {
			t.Errorf("%s with etcd down: collected %v, read from etcd %v", f.name, got[f.name], f.fromEtcd)
		}
	}
}

func gathered(t *testing.T, reg *prometheus.Registry) map[string]bool {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, f := range fams {
		got[f.GetName()] = len(f.GetMetric()) > 0
	}
	return got
}

// gaugeOf returns the value of the first series of the gauge name.
func gaugeOf(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == name && len(f.GetMetric()) > 0 {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no %s", name)
	return 0
}

// docs/operations.md names every declared metric of the nimbus, so the
// page cannot drift from the declarations.
func TestOperationsDocListsClusterFigures(t *testing.T) {
	page, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range clusterFigures() {
		if !regexp.MustCompile("`" + regexp.QuoteMeta(f.name) + "[`{]").Match(page) {
			t.Errorf("docs/operations.md does not name %s", f.name)
		}
	}
}
