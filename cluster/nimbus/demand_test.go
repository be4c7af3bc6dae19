package nimbus

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/squallstream/squall/cluster/internal/etcdtest"
	"github.com/squallstream/squall/cluster/meta"
)

// TestDemandHeaderRefusesBadDemands: every budget and check of the demand
// header refuses what it must, with a message saying what is wrong, and
// lets a good demand through unchanged.
func TestDemandHeaderRefusesBadDemands(t *testing.T) {
	good := &meta.Demand{Master: meta.Resources{CPU: 5, MemoryMB: 10},
		Executors: []meta.Resources{{CPU: 150, MemoryMB: 64}, {CPU: 0, MemoryMB: 32}}}
	v, err := EncodeDemand(good)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeDemand(v)
	if err != nil || got == nil || got.Master != good.Master || len(got.Executors) != 2 || got.Executors[0] != good.Executors[0] {
		t.Fatalf("round trip of %+v: %+v, %v", good, got, err)
	}
	for _, v := range []string{"", `{"master":{"cpu":0,"memory_mb":0},"executors":[{"cpu":0,"memory_mb":0}]}`} {
		if d, err := DecodeDemand(v); d != nil || err != nil {
			t.Errorf("DecodeDemand(%q) = %+v, %v; want nil, nil (no load declared)", v, d, err)
		}
	}
	if v, err := EncodeDemand(nil); v != "" || err != nil {
		t.Errorf("EncodeDemand(nil) = %q, %v", v, err)
	}

	many := func(n int, r meta.Resources) []meta.Resources {
		out := make([]meta.Resources, n)
		for i := range out {
			out[i] = r
		}
		return out
	}
	for _, c := range []struct {
		name   string
		header string
		want   string
		large  bool
	}{
		{"negative master CPU", `{"master":{"cpu":-1,"memory_mb":0},"executors":[]}`, "master coordinator is negative", false},
		{"negative executor memory", `{"master":{"cpu":0,"memory_mb":0},"executors":[{"cpu":1,"memory_mb":0},{"cpu":1,"memory_mb":-5}]}`,
			"executor 1 is negative", false},
		{"executor CPU above MaxLoad", `{"executors":[{"cpu":1073741825,"memory_mb":0}]}`, "exceeds 1073741824", false},
		{"master memory above MaxLoad", `{"master":{"cpu":0,"memory_mb":1073741825}}`, "exceeds 1073741824", false},
		{"too many executors", `{"executors":[` + strings.Repeat("{},", MaxDemandExecutors) + `{}]}`, "4097 executors, at most 4096", false},
		{"too large", `{"executors":[` + strings.Repeat(" ", MaxDemandBytes) + `]}`, "too large", true},
		{"unknown field", `{"master":{"cpu":1,"memory_mb":1},"gpus":3}`, "not the JSON of a demand", false},
		{"trailing data", `{"master":{"cpu":1,"memory_mb":1}} {}`, "data after the demand", false},
		{"not JSON", `cpu=100`, "not the JSON of a demand", false},
	} {
		d, err := DecodeDemand(c.header)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) || errors.Is(err, ErrDemandTooLarge) != c.large {
			t.Errorf("%s: DecodeDemand = %+v, %v; want ErrInvalid saying %q (too large: %v)", c.name, d, err, c.want, c.large)
		}
	}
	// The client checks the same before sending anything.
	for _, d := range []*meta.Demand{
		{Master: meta.Resources{CPU: -1}},
		{Executors: many(MaxDemandExecutors+1, meta.Resources{})},
		{Executors: many(MaxDemandExecutors, meta.Resources{CPU: MaxLoad, MemoryMB: MaxLoad})}, // over MaxDemandBytes
	} {
		if _, err := EncodeDemand(d); !errors.Is(err, ErrInvalid) {
			t.Errorf("EncodeDemand of a bad demand (%d executors, master %v): %v", len(d.Executors), d.Master, err)
		}
	}
	if _, err := EncodeDemand(&meta.Demand{Executors: many(1500, meta.Resources{CPU: 150, MemoryMB: 1024})}); err != nil {
		t.Errorf("1500 executors with loads do not fit the header: %v", err)
	}
}

// TestSubmitCarriesTheDemand: through the HTTP API, a submit's demand
// reaches the spec; a topology too large for every supervisor is
// refused as unscheduled, which the cluster document and the page show;
// a resubmit replaces the demand, and without one the topology runs. A
// bad demand header is refused with 400 or 413 and nothing is stored.
func TestSubmitCarriesTheDemand(t *testing.T) {
	n, cli, ctx, put := schedulingNimbus(t, slog.LevelError)
	k := meta.New("/s")
	put(k.Supervisor("small"), meta.SupervisorInfo{ID: "small", Ports: []int{1, 2}, Capacity: meta.Resources{CPU: 100, MemoryMB: 1024}})
	for n.Candidate().Current() == nil {
		select {
		case <-n.Candidate().Changed():
		case <-time.After(10 * time.Second):
			t.Fatal("no leadership")
		}
	}
	artifact := filepath.Join(t.TempDir(), "code")
	if err := os.WriteFile(artifact, []byte("code"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := &Client{Nimbus: strings.TrimPrefix(n.URL(), "http://")}
	big := &meta.Demand{Executors: []meta.Resources{{CPU: 150, MemoryMB: 64}}}
	s, err := c.Submit(ctx, "big", 1, "fp", big, artifact)
	if err != nil {
		t.Fatal(err)
	}
	if s.Demand == nil || len(s.Demand.Executors) != 1 || s.Demand.Executors[0] != big.Executors[0] {
		t.Fatalf("the spec's demand is %+v, want %+v", s.Demand, big)
	}
	var refused meta.Assignment
	etcdtest.WaitFor(t, cli, k.Assignments(), 10*time.Second, "big refused", func(kv map[string]string) bool {
		return json.Unmarshal([]byte(kv[k.Assignment("big")]), &refused) == nil && refused.Unscheduled != ""
	})
	if !strings.Contains(refused.Unscheduled, "missing 50% CPU") || len(refused.Workers) != 0 {
		t.Fatalf("refused as %q, workers %v", refused.Unscheduled, refused.Workers)
	}

	get := func(path string) string { return getOK(t, n.URL()+path) }
	var ci ClusterInfo
	if err := json.Unmarshal([]byte(get("/api/v1/cluster")), &ci); err != nil {
		t.Fatal(err)
	}
	if len(ci.Topologies) != 1 || ci.Topologies[0].Assignment == nil || ci.Topologies[0].Assignment.Unscheduled != refused.Unscheduled ||
		ci.Topologies[0].Spec.Demand == nil {
		t.Fatalf("the cluster document does not carry the refusal and the demand: %+v", ci.Topologies)
	}
	page := get("/")
	if !strings.Contains(page, "not scheduled: ") || !strings.Contains(page, "missing 50% CPU") {
		t.Fatalf("the page does not say big is not scheduled:\n%s", page)
	}

	// Bad headers: refused, and the spec keeps its demand.
	post := func(header string) (int, string) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, n.URL()+"/api/topologies/big?workers=1", bytes.NewReader([]byte("code")))
		req.Header.Set(DemandHeader, header)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post(`{"executors":[{"cpu":-150,"memory_mb":64}]}`); code != http.StatusBadRequest || !strings.Contains(body, "negative") {
		t.Errorf("a negative demand: %d %s", code, body)
	}
	if code, body := post(`{"executors":[` + strings.Repeat(" ", MaxDemandBytes) + `]}`); code != http.StatusRequestEntityTooLarge ||
		!strings.Contains(body, "too large") {
		t.Errorf("an oversized demand: %d %s", code, body)
	}
	if _, err := n.SubmitTopologyDemand(ctx, "big", 1, "fp", &meta.Demand{Master: meta.Resources{MemoryMB: -1}},
		bytes.NewReader([]byte("code"))); !errors.Is(err, ErrInvalid) {
		t.Errorf("SubmitTopologyDemand of a negative demand: %v", err)
	}
	v, _ := mustGet(t, n, k.Spec("big"))
	var spec meta.Spec
	if json.Unmarshal([]byte(v), &spec) != nil || spec.Demand == nil || spec.Demand.Executors[0].CPU != 150 {
		t.Fatalf("a refused submit changed the spec: %s", v)
	}

	// A resubmit without a demand replaces it: the topology now fits.
	if s, err = c.Submit(ctx, "big", 1, "fp", nil, artifact); err != nil || s.Demand != nil {
		t.Fatalf("resubmit: %+v, %v", s, err)
	}
	etcdtest.WaitFor(t, cli, k.Assignments(), 10*time.Second, "big placed", func(kv map[string]string) bool {
		var a meta.Assignment
		return json.Unmarshal([]byte(kv[k.Assignment("big")]), &a) == nil && a.Unscheduled == "" && len(a.Workers) == 1
	})
}
