package trident

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/trident/coordstore"
)

// stormRASExample declares Storm's Trident RAS example
// (docs/Trident-RAS-API.md in Storm): the spout at 20% and 512+256 MB,
// Split at 10% and 512 MB, BangAdder (parallelism 10) at 50% and 1024
// MB, the persistent count at 100% and 2048 MB.
func stormRASExample(t *Topology) *State[state.MapState[int64]] {
	bang := FunctionFunc(func(_ context.Context, tu Tuple, out Collector) error {
		out.Emit(tu.String("word") + "!")
		return nil
	})
	words := sentenceStream(t, "s").CPULoad(20).MemoryLoad(512+256).
		Each(Fields{"sentence"}, split, "word").CPULoad(10).MemoryLoad(512).
		Each(Fields{"word"}, bang, "word!").Parallelism(10).CPULoad(50).MemoryLoad(1024)
	return PersistentAggregate(words.GroupBy("word!"), OpaqueMemory[int64]("c"), Fields{"word!"}, count{}, "count").
		CPULoad(100).MemoryLoad(2048)
}

// TestLoadsLikeStorm: Storm sums the loads of the operations it combines
// into one bolt and gives every executor its bolt's load. Storm's example
// ends with a spout of 20% and 768 MB, a bolt of 60% (Split + BangAdder)
// and 1536 MB, and a bolt of 100% and 2048 MB; squall runs a source's
// first operations in the source's component, so the first two are one
// component of 80% and 2304 MB per task.
func TestLoadsLikeStorm(t *testing.T) {
	tt := NewTopology("ras")
	stormRASExample(tt)
	p := tt.plan()
	loads := map[string]Resources{}
	for _, s := range p.Stages {
		loads[s.Name] = Resources{CPU: s.Load.CPU, MemoryMB: s.Load.MemoryMB}
	}
	want := map[string]Resources{"spout-s": {80, 2304}, "b-1": {100, 2048}}
	if len(loads) != len(want) {
		t.Fatalf("stages %v, want %v", loads, want)
	}
	for name, r := range want {
		if loads[name] != r {
			t.Errorf("stage %s needs %v per task, want %v", name, loads[name], r)
		}
	}

	d, err := tt.Demand(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Master != (Resources{}) {
		t.Errorf("the master coordinator needs %v; it declares nothing", d.Master)
	}
	var total Resources
	n := map[Resources]int{}
	for _, r := range d.Executors {
		total = total.Add(r)
		n[r]++
	}
	// 10 executors of the source's component, 1 of the committer, 1 acker.
	if n[Resources{80, 2304}] != 10 || n[Resources{100, 2048}] != 1 || n[Resources{}] != 1 || len(d.Executors) != 12 {
		t.Errorf("executors %v: want 10 of {80 2304}, 1 of {100 2048}, 1 of nothing", d.Executors)
	}
	if want := (Resources{CPU: 900, MemoryMB: 25088}); total != want {
		t.Errorf("total %v, want %v", total, want)
	}
	for _, c := range []struct {
		count int
		want  []Resources
	}{
		{1, []Resources{{900, 25088}}},
		// Dealt from share 1 on: the committer's executor, then the
		// source component's ten in turn, then the acker.
		{2, []Resources{{400, 11520}, {500, 13568}}},
	} {
		if got := d.Shares(c.count); !slices.Equal(got, c.want) {
			t.Errorf("Shares(%d) = %v, want %v", c.count, got, c.want)
		}
	}
}

// TestDemandFollowsPlacement: what Demand.Shares gives each share is the
// sum, over the executors placeShares puts on it, of their loads, for
// every share count (the cluster's scheduler relies on the rule).
func TestDemandFollowsPlacement(t *testing.T) {
	tt := NewTopology("ras")
	stormRASExample(tt)
	cfg := Config{}.withDefaults()
	d, err := tt.Demand(cfg)
	if err != nil {
		t.Fatal(err)
	}
	topo, r, err := tt.generate(&Config{Topology: cfg.Topology, Store: cfg.Store}, coordstore.Fence{Owner: tt.name})
	if err != nil {
		t.Fatal(err)
	}
	perTask := map[string]Resources{}
	for _, s := range r.plan.Stages {
		perTask[s.Name] = Resources{CPU: s.Load.CPU, MemoryMB: s.Load.MemoryMB}
	}
	components := topo.TaskComponents(cfg.Topology.Ackers)
	for count := 1; count <= 5; count++ {
		want := make([]Resources, count)
		for task, share := range placeShares(topo, cfg.Topology.Ackers, count) {
			want[share] = want[share].Add(perTask[components[task]])
		}
		if got := d.Shares(count); !slices.Equal(got, want) {
			t.Errorf("Shares(%d) = %v; the placement gives %v", count, got, want)
		}
	}
	if d.Shares(0) != nil {
		t.Errorf("Shares(0) = %v, want nil", d.Shares(0))
	}
}

// TestNoLoadNoDemand: a topology that declares no load needs nothing, so
// the cluster places it as it did before loads existed.
func TestNoLoadNoDemand(t *testing.T) {
	tt := NewTopology("plain")
	PersistentAggregate(sentenceStream(tt, "s").Each(Fields{"sentence"}, split, "word").GroupBy("word"),
		OpaqueMemory[int64]("c"), Fields{"word"}, count{}, "count")
	d, err := tt.Demand(Config{})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range d.Shares(3) {
		if r != (Resources{}) {
			t.Errorf("share %d needs %v", i, r)
		}
	}
}

// TestLoadMistakes: a negative load, a load on a repartition and a load
// on static state are refused, naming the method.
func TestLoadMistakes(t *testing.T) {
	for _, c := range []struct {
		name, want string
		declare    func(*Topology)
	}{
		{"negative cpu", "CPULoad: -1 is negative", func(t *Topology) { sentenceStream(t, "s").CPULoad(-1) }},
		{"negative memory", "MemoryLoad: -5 is negative", func(t *Topology) { sentenceStream(t, "s").MemoryLoad(-5) }},
		{"repartition", "CPULoad: a repartition takes no load", func(t *Topology) { sentenceStream(t, "s").Shuffle().CPULoad(10) }},
		{"static state", "MemoryLoad: static state", func(t *Topology) {
			StaticState(t, func(context.Context, int, int) (int, error) { return 0, nil }).MemoryLoad(10)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tt := NewTopology("bad")
			c.declare(tt)
			err := errors.Join(tt.errs...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("errors %v, want one containing %q", err, c.want)
			}
		})
	}
}
