package trident

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/squallstream/squall/trident/spout"
)

func TestSubmitReportsEveryMistake(t *testing.T) {
	src := newFixed(1, "a b")
	tt := NewTopology("bad")
	s := tt.NewStream("s", BatchSource(Fields{"sentence"}, func() spout.Batcher { return src }))
	tt.NewStream("s", BatchSource(Fields{"sentence"}, func() spout.Batcher { return src }))
	s.Each(Fields{"missing"}, split, "word")
	s.Each(Fields{"sentence"}, split, "sentence")
	s.Project("nope")
	s.PartitionBy("ghost")
	s.Parallelism(0)
	g := s.Each(Fields{"sentence"}, split, "word").GroupBy("word")
	PersistentAggregate(g, OpaqueMemory[int64]("c"), Fields{"absent"}, count{}, "word")
	_, err := tt.Submit(context.Background(), Config{})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("submit = %v; want ErrInvalid", err)
	}
	for _, want := range []string{
		`stream id "s" used twice`,
		`Each: unknown field "missing" (stream fields: [sentence])`,
		`Each: output field "sentence" clashes`,
		`Project: unknown field "nope"`,
		`PartitionBy: unknown field "ghost"`,
		"Parallelism: 0 is below 1",
		`PersistentAggregate: unknown field "absent"`,
		`output field "word" is a group field`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%v", want, err)
		}
	}
}

func TestSubmitRejectsConfigWithoutAckers(t *testing.T) {
	tt := NewTopology("t")
	tt.NewStream("s", BatchSource(Fields{"v"}, func() spout.Batcher { return newFixed(1) }))
	cfg := Config{}
	cfg.Topology.Ackers = -1 // zero means 1
	if _, err := tt.Submit(context.Background(), cfg); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "Ackers") {
		t.Fatalf("submit = %v", err)
	}
	cfg = Config{}
	cfg.Topology.DisableTimeouts = true
	if _, err := tt.Submit(context.Background(), cfg); !errors.Is(err, ErrInvalid) {
		t.Fatalf("submit with timeouts off = %v", err)
	}
	if _, err := NewTopology("empty").Submit(context.Background(), Config{}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("empty topology = %v", err)
	}
}

func TestPlanStagesOperationsBetweenRepartitions(t *testing.T) {
	tt := NewTopology("plan")
	s := tt.NewStream("s", BatchSource(Fields{"sentence"}, func() spout.Batcher { return newFixed(1) }).Parallelism(3))
	w := s.Each(Fields{"sentence"}, split, "word").Filter(FilterFunc(func(context.Context, Tuple) (bool, error) { return true, nil }))
	g := w.Shuffle().Project("word").Parallelism(2).GroupBy("word")
	PersistentAggregate(g, OpaqueMemory[int64]("c"), Fields{"word"}, count{}, "count")
	stages := tt.plan().Stages
	if len(stages) != 3 {
		t.Fatalf("stages = %v", stages)
	}
	if stages[0].Name != "spout-s" || stages[0].Parallelism != 3 || len(stages[0].Nodes) != 3 {
		t.Fatalf("source stage = %+v", stages[0])
	}
	if stages[1].Parallelism != 2 || stages[1].Committer || len(stages[1].Upstream) != 1 {
		t.Fatalf("middle stage = %+v", stages[1])
	}
	if !stages[2].Committer || stages[2].Upstream[0] != stages[1] {
		t.Fatalf("last stage = %+v", stages[2])
	}
}

func TestStateQueryAgainstAnotherTopologysState(t *testing.T) {
	other := NewTopology("other")
	counts := PersistentAggregate(
		other.NewStream("w", BatchSource(Fields{"word"}, func() spout.Batcher { return newFixed(1) })).GroupBy("word"),
		OpaqueMemory[int64]("c"), Fields{"word"}, count{}, "count")
	tt := NewTopology("t")
	q := tt.NewStream("q", BatchSource(Fields{"word"}, func() spout.Batcher { return newFixed(1) }))
	StateQuery(q, counts, Fields{"word"}, mapGet{}, "count")
	_, err := tt.Submit(context.Background(), Config{})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "StateQuery: the state belongs to another topology") {
		t.Fatalf("submit = %v", err)
	}
}

func TestJoinChecks(t *testing.T) {
	tt := NewTopology("j")
	a := tt.NewStream("a", BatchSource(Fields{"k", "v"}, func() spout.Batcher { return newFixed(1) }))
	b := tt.NewStream("b", BatchSource(Fields{"k", "w"}, func() spout.Batcher { return newFixed(1) }))
	tt.Join(a, Fields{"k"}, b, Fields{"k"}, Inner, "k", "v")
	tt.Join(a, Fields{"k"}, a, Fields{"k"}, Inner, "k", "v", "v2")
	tt.Join(a, Fields{"k", "v"}, b, Fields{"k"}, Inner, "k", "v", "w")
	_, err := tt.Submit(context.Background(), Config{})
	for _, want := range []string{
		"Join: 2 output fields for 3 values",
		"Join: a stream cannot be joined with itself",
		"Join: 2 left keys and 1 right keys",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not mention %q", err, want)
		}
	}
}
