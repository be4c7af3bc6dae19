package trident

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/squallstream/squall/trident/internal/plan"
	"github.com/squallstream/squall/trident/spout"
)

// planCases are the topologies whose printed plans are the golden files
// of the planner, in internal/plan/testdata/plans; the planner's own
// tests plan the graphs these topologies declare, written out by hand.
var planCases = []planCase{
	{"wordcount", func(t *Topology) {
		words := sentenceStream(t, "s").Each(Fields{"sentence"}, split, "word").Parallelism(2)
		PersistentAggregate(words.GroupBy("word").Parallelism(3), OpaqueMemory[int64]("c"), Fields{"word"}, count{}, "count")
	}},
	{"merge", func(t *Topology) {
		a := sentenceStream(t, "a").FlatMap(splitWords, "word")
		b := sentenceStream(t, "b").FlatMap(splitWords, "word").Parallelism(2)
		t.Merge(a, b).Filter(FilterFunc(func(context.Context, Tuple) (bool, error) { return true, nil })).Parallelism(4).
			Peek(func(Tuple) {})
	}},
	{"join", func(t *Topology) {
		o := t.NewStream("orders", BatchSource(Fields{"order", "amount"}, func() spout.Batcher { return newFixed(1) }))
		s := t.NewStream("statuses", BatchSource(Fields{"id", "status"}, func() spout.Batcher { return newFixed(1) }))
		t.Join(o, Fields{"order"}, s, Fields{"id"}, Inner, "order", "amount", "status").Parallelism(2).
			Project("order", "status")
	}},
	{"statequery", func(t *Topology) {
		words := sentenceStream(t, "s").FlatMap(splitWords, "word")
		counts := PersistentAggregate(words.GroupBy("word").Parallelism(2), OpaqueMemory[int64]("c"), Fields{"word"}, count{}, "count")
		q := t.NewStream("q", BatchSource(Fields{"word"}, func() spout.Batcher { return newFixed(1) }))
		StateQuery(q, counts, Fields{"word"}, mapGet{}, "count").Peek(func(Tuple) {})
	}},
	{"chainpersist", func(t *Topology) {
		words := sentenceStream(t, "s").FlatMap(splitWords, "word")
		firsts := PartitionPersist(words.PartitionBy("word").Parallelism(2),
			func(context.Context, int, int) (*seenWords, error) { return &seenWords{}, nil },
			Fields{"word"}, StateUpdater[*seenWords](firstSight{}), "word").NewValuesStream()
		st := PersistentAggregate(t.Merge(words, firsts).GroupBy("word").Parallelism(2), OpaqueMemory[int64]("c"), Fields{"word"}, count{}, "count")
		st.NewValuesStream().Peek(func(Tuple) {})
	}},
	{"global", func(t *Topology) {
		words := sentenceStream(t, "s").FlatMap(splitWords, "word").Parallelism(2)
		PersistentAggregateGlobal(words, OpaqueMemory[int64]("total"), Fields{"word"}, count{}, "total")
		Aggregate(words, Fields{"word"}, Combining[int64](count{}), "n")
		PartitionAggregate(words.BatchGlobal(), Fields{"word"}, Reducing[string](joinWords{}), "line")
	}},
	{"resources", func(t *Topology) { stormRASExample(t) }},
	{"partitionpersist", func(t *Topology) {
		words := sentenceStream(t, "s").FlatMap(splitWords, "word")
		PartitionPersist(words.Shuffle().Parallelism(3),
			func(context.Context, int, int) (*seenWords, error) { return &seenWords{}, nil },
			Fields{"word"}, StateUpdater[*seenWords](firstSight{}), "word")
	}},
}

type planCase struct {
	name  string
	build func(t *Topology)
}

// declare declares the case's topology, failing the test if that fails.
func (c planCase) declare(t *testing.T) *Topology {
	t.Helper()
	tt := NewTopology(c.name)
	c.build(tt)
	if len(tt.errs) > 0 {
		t.Fatalf("declaring the topology: %v", tt.errs)
	}
	return tt
}

func sentenceStream(t *Topology, id string) *Stream {
	return t.NewStream(id, BatchSource(Fields{"sentence"}, func() spout.Batcher { return newFixed(1) }))
}

// TestPrintedPlans compares the printed plan of each of planCases with
// the planner's golden file of the same name: the API declares the graph
// the planner's tests expect. go test ./trident/internal/plan -update
// rewrites the files.
func TestPrintedPlans(t *testing.T) {
	for _, c := range planCases {
		t.Run(c.name, func(t *testing.T) {
			got := plan.Print(c.declare(t).plan())
			path := filepath.Join("internal", "plan", "testdata", "plans", c.name+".txt")
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("plan of %s differs from %s\n got:\n%s\nwant:\n%s", c.name, path, got, want)
			}
		})
	}
}
