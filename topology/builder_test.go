package topology

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func validBuilder() *Builder {
	f := newFeed()
	b := NewBuilder()
	b.Spout("spout", f.newSpout).Output("word", "n")
	b.Bolt("bolt", boltFunc(ackAll).newBolt).Output("x").Input("spout", ByFields("word"))
	return b
}

func TestBuildValidTopology(t *testing.T) {
	topo, err := validBuilder().Build()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(topo.Components(), ","); got != "bolt,spout" {
		t.Fatalf("components = %s", got)
	}
	if topo.component("bolt").taskIDs[0] != 0 || topo.component("spout").taskIDs[0] != 1 {
		t.Fatal("tasks are not numbered in component id order")
	}
}

func TestBuildRejectsInvalidTopologies(t *testing.T) {
	f := newFeed()
	cases := []struct {
		name  string
		build func(b *Builder)
		want  []string
	}{
		{"nothing", func(b *Builder) {}, []string{"no components"}},
		{"unknown component", func(b *Builder) {
			b.Spout("s", f.newSpout).Output("v")
			b.Bolt("b", boltFunc(ackAll).newBolt).Input("ghost", Shuffle())
		}, []string{`component "b": input from unknown component "ghost"`}},
		{"unknown stream", func(b *Builder) {
			b.Spout("s", f.newSpout).Output("v")
			b.Bolt("b", boltFunc(ackAll).newBolt).InputStream("s", "side", Shuffle())
		}, []string{`unknown stream "side" (declared: [default])`}},
		{"unknown field", func(b *Builder) {
			b.Spout("s", f.newSpout).Output("v")
			b.Bolt("b", boltFunc(ackAll).newBolt).Input("s", ByFields("w"))
		}, []string{`fields grouping on unknown field "w" (stream fields: [v])`}},
		{"cycle", func(b *Builder) {
			b.Spout("s", f.newSpout).Output("v")
			b.Bolt("a", boltFunc(ackAll).newBolt).Output("v").Input("s", Shuffle()).Input("c", Shuffle())
			b.Bolt("b", boltFunc(ackAll).newBolt).Output("v").Input("a", Shuffle())
			b.Bolt("c", boltFunc(ackAll).newBolt).Output("v").Input("b", Shuffle())
		}, []string{"bolts form a cycle: a -> b -> c -> a"}},
		{"duplicate id", func(b *Builder) {
			b.Spout("s", f.newSpout).Output("v")
			b.Spout("s", f.newSpout).Output("v")
		}, []string{`component "s": declared twice`}},
		{"reserved id", func(b *Builder) {
			b.Spout("__acker", f.newSpout).Output("v")
		}, []string{"reserved for the runtime"}},
		{"bad parallelism", func(b *Builder) {
			b.Spout("s", f.newSpout).Output("v").Parallelism(0)
			b.Bolt("b", boltFunc(ackAll).newBolt).Parallelism(3).Tasks(2).Input("s", Shuffle())
		}, []string{"parallelism is 0", "2 tasks cannot fill 3 executors"}},
		{"bolt without inputs", func(b *Builder) {
			b.Spout("s", f.newSpout).Output("v")
			b.Bolt("b", boltFunc(ackAll).newBolt)
		}, []string{"a bolt needs at least one input"}},
		{"nil constructor", func(b *Builder) {
			b.Spout("s", nil).Output("v")
		}, []string{"the constructor is nil"}},
		{"direct mismatch", func(b *Builder) {
			b.Spout("s", f.newSpout).Output("v").DirectStream("d", "v")
			b.Bolt("a", boltFunc(ackAll).newBolt).Input("s", Direct())
			b.Bolt("b", boltFunc(ackAll).newBolt).InputStream("s", "d", Shuffle())
		}, []string{`input from "s"/default: the direct grouping`, `input from "s"/d: the direct grouping`}},
		{"repeated field and stream", func(b *Builder) {
			b.Spout("s", f.newSpout).Output("v", "v").Output("w")
		}, []string{`field "v" is empty or repeated`, `stream "default" declared twice`}},
		{"missing grouping", func(b *Builder) {
			b.Spout("s", f.newSpout).Output("v")
			b.Bolt("b", boltFunc(ackAll).newBolt).Input("s", Grouping{})
		}, []string{"has no grouping"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := NewBuilder()
			c.build(b)
			topo, err := b.Build()
			if err == nil || topo != nil {
				t.Fatalf("built %v; want an error", topo)
			}
			if !errors.Is(err, ErrInvalidTopology) {
				t.Fatalf("error %v does not wrap ErrInvalidTopology", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestExecutorTasksSpreadEvenly(t *testing.T) {
	c := &component{parallelism: 3, tasks: 8, taskIDs: []TaskID{10, 11, 12, 13, 14, 15, 16, 17}}
	runs := c.executorTasks()
	sizes := []int{len(runs[0]), len(runs[1]), len(runs[2])}
	if sizes[0] != 3 || sizes[1] != 3 || sizes[2] != 2 || runs[2][1] != 17 {
		t.Fatalf("runs = %v", runs)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("default config invalid: %v", err)
	}
	bad := Config{Ackers: -1, MessageTimeout: -time.Second, MaxSpoutPending: -1, BatchSize: -1,
		QueueCapacity: -1, SpoutIdleWait: -1, RestartMinBackoff: 2 * time.Second, RestartMaxBackoff: time.Second}
	err := bad.Validate()
	if !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("Validate = %v; want ErrInvalidConfig", err)
	}
	for _, w := range []string{"Ackers is -1", "MessageTimeout", "MaxSpoutPending", "BatchSize", "QueueCapacity", "SpoutIdleWait", "above RestartMaxBackoff"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error does not mention %s: %v", w, err)
		}
	}
	d := Config{}.withDefaults()
	if d.MessageTimeout != 30*time.Second || d.BatchSize != 256 || d.QueueCapacity != 64 || d.Logger == nil || d.Ackers != 0 {
		t.Fatalf("defaults = %+v", d)
	}
}

func TestSubmitErrors(t *testing.T) {
	topo := mustBuild(t, validBuilder())
	c := NewLocalCluster()
	if _, err := c.Submit("x", topo, Config{Ackers: -1}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("bad config: %v", err)
	}
	if _, err := c.Submit("", topo, DefaultConfig()); err == nil {
		t.Fatal("empty name accepted")
	}
	if _, err := c.Submit("x", nil, DefaultConfig()); err == nil {
		t.Fatal("nil topology accepted")
	}
	if _, err := c.Submit("x", topo, DefaultConfig()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Submit("x", topo, DefaultConfig()); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Fatalf("duplicate name: %v", err)
	}
	if err := c.Kill(t.Context(), "nope"); err == nil {
		t.Fatal("killing an unknown topology succeeded")
	}
	if err := c.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Submit("y", topo, DefaultConfig()); !errors.Is(err, ErrClusterShutdown) {
		t.Fatalf("submit after shutdown: %v", err)
	}
}
