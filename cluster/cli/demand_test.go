package cli

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/cluster/worker"
	"github.com/squallstream/squall/ops"
	"github.com/squallstream/squall/trident"
)

// loadedTopology is a word count whose split declares cpu% CPU and mb MB
// per task, with parallelism tasks.
func loadedTopology(cpu, mb, tasks int) (*trident.Topology, trident.Config) {
	tt := trident.NewTopology("loaded")
	split := trident.FunctionFunc(func(_ context.Context, t trident.Tuple, out trident.Collector) error {
		for _, w := range strings.Fields(t.String("sentence")) {
			out.Emit(w)
		}
		return nil
	})
	words := tt.NewStream("sentences", trident.FixedSource(trident.Fields{"sentence"}, [][]any{{"a b"}})).
		Each(trident.Fields{"sentence"}, split, "word").Parallelism(tasks)
	if cpu > 0 || mb > 0 {
		words = words.CPULoad(cpu).MemoryLoad(mb)
	}
	trident.PersistentAggregate(words.GroupBy("word"), trident.OpaqueMemory[int64]("counts"), trident.Fields{"word"}, ops.Count{}, "count")
	return tt, trident.Config{AllowVolatileState: true}
}

// TestToMetaDemand: the spec's demand is the topology's, figure for
// figure and in the same order; a topology that declares nothing has
// none.
func TestToMetaDemand(t *testing.T) {
	td := trident.Demand{Master: trident.Resources{CPU: 3, MemoryMB: 4},
		Executors: []trident.Resources{{CPU: 150, MemoryMB: 64}, {}, {CPU: 1, MemoryMB: 2}}}
	d := toMetaDemand(td)
	if d == nil || d.Master != (meta.Resources{CPU: 3, MemoryMB: 4}) || len(d.Executors) != 3 ||
		d.Executors[0] != (meta.Resources{CPU: 150, MemoryMB: 64}) || d.Executors[1] != (meta.Resources{}) ||
		d.Executors[2] != (meta.Resources{CPU: 1, MemoryMB: 2}) {
		t.Fatalf("toMetaDemand(%+v) = %+v", td, d)
	}
	for _, td := range []trident.Demand{{}, {Executors: []trident.Resources{{}, {}}}} {
		if d := toMetaDemand(td); d != nil {
			t.Errorf("toMetaDemand(%+v) = %+v, want nil", td, d)
		}
	}
	// Only the master declares: still a demand.
	if d := toMetaDemand(trident.Demand{Master: trident.Resources{MemoryMB: 1}, Executors: []trident.Resources{{}}}); d == nil {
		t.Error("a demand of the master alone was dropped")
	}
	// Only one executor's memory: still a demand.
	if d := toMetaDemand(trident.Demand{Executors: []trident.Resources{{}, {MemoryMB: 1}}}); d == nil {
		t.Error("a demand of one executor's memory was dropped")
	}
}

// TestPlanDemandBuildsForPlanning: submit builds the topology with
// Env.Planning and the workers asked for, and its demand is the built
// topology's (trident.Topology.Demand); a Build that fails while
// planning fails the submit naming the topology and Env.Planning.
func TestPlanDemandBuildsForPlanning(t *testing.T) {
	var seen worker.Env
	top := worker.Topology{Name: "loaded", Build: func(env worker.Env) (*trident.Topology, trident.Config, error) {
		seen = env
		tt, cfg := loadedTopology(150, 64, 2)
		return tt, cfg, nil
	}}
	log := slog.New(slog.DiscardHandler)
	d, err := planDemand(top, 3, log)
	if err != nil {
		t.Fatal(err)
	}
	if !seen.Planning || seen.Shares != 3 || seen.Logger == nil {
		t.Fatalf("Build ran with %+v; want Planning, Shares 3 and a logger", seen)
	}
	tt, cfg := loadedTopology(150, 64, 2)
	want, err := tt.Demand(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if d == nil || len(d.Executors) != len(want.Executors) {
		t.Fatalf("demand %+v, want %+v", d, want)
	}
	loaded := 0
	for i, r := range d.Executors {
		if r.CPU != want.Executors[i].CPU || r.MemoryMB != want.Executors[i].MemoryMB {
			t.Fatalf("executor %d: %+v, want %+v", i, r, want.Executors[i])
		}
		if r == (meta.Resources{CPU: 150, MemoryMB: 64}) {
			loaded++
		}
	}
	if loaded != 2 {
		t.Errorf("%d executors need 150%% CPU and 64 MB, want the split's 2: %+v", loaded, d.Executors)
	}

	plain := worker.Topology{Name: "plain", Build: func(worker.Env) (*trident.Topology, trident.Config, error) {
		tt, cfg := loadedTopology(0, 0, 2)
		return tt, cfg, nil
	}}
	if d, err := planDemand(plain, 1, log); d != nil || err != nil {
		t.Errorf("a topology without loads: %+v, %v; want no demand", d, err)
	}

	boom := errors.New("cassandra: no hosts")
	for _, b := range []func(worker.Env) (*trident.Topology, trident.Config, error){
		func(worker.Env) (*trident.Topology, trident.Config, error) { return nil, trident.Config{}, boom },
		func(worker.Env) (*trident.Topology, trident.Config, error) { return nil, trident.Config{}, nil },
		func(worker.Env) (*trident.Topology, trident.Config, error) { panic("dialing") },
	} {
		_, err := planDemand(worker.Topology{Name: "rooms", Build: b}, 1, log)
		if err == nil || !strings.Contains(err.Error(), "topology rooms") || !strings.Contains(err.Error(), "Env.Planning") {
			t.Errorf("a Build failing in planning: %v", err)
		}
	}
}

// TestSubmitFailsWhenPlanningFails: the submit command stops before
// connecting anywhere when the topology's Build fails in planning.
func TestSubmitFailsWhenPlanningFails(t *testing.T) {
	build := func(env worker.Env) (*trident.Topology, trident.Config, error) {
		if env.Planning {
			return nil, trident.Config{}, errors.New("no Kafka while planning")
		}
		return nil, trident.Config{}, nil
	}
	reg, err := NewRegistry([]worker.Topology{{Name: "rooms", Build: build}})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	p := &Program{Registry: reg, Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }}
	code := Run(context.Background(), p, []string{"submit", "rooms", "--etcd-endpoints", "127.0.0.1:1", "--etcd-dial-timeout", "1s"})
	if code != ExitError || !strings.Contains(out.String(), "planning topology rooms") || !strings.Contains(out.String(), "no Kafka while planning") ||
		strings.Contains(out.String(), "127.0.0.1:1") {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
}
