package trident

import (
	"slices"
	"testing"

	"github.com/squallstream/squall/trident/internal/exec"
	"github.com/squallstream/squall/trident/internal/plan"
	"github.com/squallstream/squall/trident/spout"
)

// TestPersistentAggregateCombinesBeforeTheRepartition checks the plan of
// a grouped persistent aggregation: the combining runs in the upstream
// stage (one partial per group and task crosses), and the GroupBy's own
// repartition, which nothing reads any more, is not planned.
func TestPersistentAggregateCombinesBeforeTheRepartition(t *testing.T) {
	tt := NewTopology("preagg")
	w := tt.NewStream("s", BatchSource(Fields{"sentence"}, func() spout.Batcher { return newFixed(1) })).FlatMap(splitWords, "word")
	st := PersistentAggregate(w.GroupBy("word").Parallelism(3), OpaqueMemory[int64]("c"), Fields{"word"}, count{}, "count")
	stages := tt.plan().Stages
	if len(stages) != 2 {
		t.Fatalf("%d stages, want the source's and the committer's: %v", len(stages), stages)
	}
	src, committer := stages[0], stages[1]
	if !slices.ContainsFunc(src.Nodes, func(n *plan.Node) bool { _, ok := n.Payload.(*exec.Aggregate); return ok }) {
		t.Fatal("the source stage does not combine before the repartition")
	}
	if !committer.Committer || committer.Parallelism != 3 {
		t.Fatalf("committer stage %v: committer %v, parallelism %d; want a committer with the GroupBy's parallelism 3",
			committer, committer.Committer, committer.Parallelism)
	}
	if got := st.NewValuesStream().Fields(); !slices.Equal(got, Fields{"word", "count"}) {
		t.Fatalf("new values fields %v, want [word count]", got)
	}
}
