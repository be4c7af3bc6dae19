package nimbus

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/squallstream/squall/cluster/internal/etcdtest"
	"github.com/squallstream/squall/cluster/meta"
)

// TestClusterView: GET /api/v1/cluster names the leader, the campaigning
// nimbuses, the supervisors with what runs in each slot, and the
// topologies; /metrics says who leads and counts slots and workers.
func TestClusterView(t *testing.T) {
	cli := etcdtest.Client(t, etcdtest.Embedded(t))
	n, err := New(Config{Client: cli, Prefix: "/v", ID: "n1", CodeDir: t.TempDir(), TTL: time.Second,
		ScheduleDelay: 20 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	run(t, n)
	ctx := context.Background()
	k := meta.New("/v")
	for _, id := range []string{"s1", "s2"} {
		if _, err := cli.Put(ctx, k.Supervisor(id), meta.Encode(meta.SupervisorInfo{ID: id, Ports: []int{7, 8},
			LogURL: "http://logs-of-" + id})); err != nil {
			t.Fatal(err)
		}
	}
	for n.Candidate().Current() == nil {
		select {
		case <-n.Candidate().Changed():
		case <-time.After(10 * time.Second):
			t.Fatal("no leadership")
		}
	}
	if _, err := n.SubmitTopology(ctx, "wc", 2, "fp", bytes.NewReader([]byte("code"))); err != nil {
		t.Fatal(err)
	}
	etcdtest.WaitFor(t, cli, k.Assignments(), 10*time.Second, "wc on two slots", func(kv map[string]string) bool {
		var a meta.Assignment
		return json.Unmarshal([]byte(kv[k.Assignment("wc")]), &a) == nil && len(a.Workers) == 2
	})
	a, _ := mustGet(t, n, k.Assignment("wc"))
	var asg meta.Assignment
	json.Unmarshal([]byte(a), &asg)
	running := asg.Workers[1].Slot
	if _, err := cli.Put(ctx, k.Worker("wc", running), meta.Encode(meta.WorkerInfo{Topology: "wc", Slot: running, PID: 42,
		Epoch: asg.Epoch, Addr: "127.0.0.1:9"})); err != nil {
		t.Fatal(err)
	}

	get := func(path string) string { return getOK(t, n.URL()+path) }
	var c ClusterInfo
	if err := json.Unmarshal([]byte(get("/api/v1/cluster")), &c); err != nil {
		t.Fatal(err)
	}
	if c.Leader != "n1" || c.Nimbus != "n1" || strings.Join(c.Nimbuses, ",") != "n1" {
		t.Fatalf("leader %q, nimbus %q, nimbuses %v; want n1", c.Leader, c.Nimbus, c.Nimbuses)
	}
	if len(c.Supervisors) != 2 || len(c.Topologies) != 1 || c.Topologies[0].Spec.Topology != "wc" {
		t.Fatalf("supervisors %+v, topologies %+v", c.Supervisors, c.Topologies)
	}
	used := 0
	for _, s := range c.Supervisors {
		for _, sl := range s.Slots {
			if sl.Topology == "" {
				continue
			}
			used++
			share := asg.Share(meta.Slot{Supervisor: s.ID, Port: sl.Port})
			if sl.Topology != "wc" || sl.Share != share || sl.Epoch != asg.Epoch {
				t.Errorf("slot %s:%d = %+v, want wc share %d epoch %d", s.ID, sl.Port, sl, share, asg.Epoch)
			}
			if running := (meta.Slot{Supervisor: s.ID, Port: sl.Port}) == running; running != (sl.PID == 42) {
				t.Errorf("slot %s:%d = %+v: the registered worker is pid 42 on %v", s.ID, sl.Port, sl, running)
			}
		}
	}
	if used != 2 {
		t.Fatalf("%d slots used, want 2: %+v", used, c.Supervisors)
	}

	page := get("/")
	for _, want := range []string{"Leader: <b>n1</b>", "<td>wc</td>", "http://logs-of-s1/logs/7?tail=200&amp;format=text",
		"pid 42 at 127.0.0.1:9", "free"} {
		if !strings.Contains(page, want) {
			t.Errorf("the cluster page lacks %q:\n%s", want, page)
		}
	}

	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(strings.NewReader(get("/metrics")))
	if err != nil {
		t.Fatal(err)
	}
	value := func(name string, labels map[string]string) float64 {
		t.Helper()
		f := families[name]
		if f == nil {
			t.Fatalf("no %s in /metrics", name)
		}
	metrics:
		for _, m := range f.Metric {
			for _, l := range m.Label {
				if labels[l.GetName()] != l.GetValue() {
					continue metrics
				}
			}
			return m.GetGauge().GetValue()
		}
		t.Fatalf("no %s%v in /metrics", name, labels)
		return 0
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"squall_leader", map[string]string{"nimbus": "n1"}, 1},
		{"squall_cluster_supervisors", nil, 2},
		{"squall_cluster_slots", map[string]string{"state": "used"}, 2},
		{"squall_cluster_slots", map[string]string{"state": "free"}, 2},
		{"squall_cluster_workers", map[string]string{"topology": "wc", "state": "assigned"}, 2},
		{"squall_cluster_workers", map[string]string{"topology": "wc", "state": "running"}, 1},
		{"squall_cluster_read_errors", nil, 0},
	} {
		if got := value(c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
}

// getOK returns the body of a GET of url, failing t unless it is 200 OK.
func getOK(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %s", url, resp.Status, b)
	}
	return string(b)
}
