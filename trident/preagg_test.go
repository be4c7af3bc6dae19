package trident

import (
	"slices"
	"testing"

	"github.com/squallstream/squall/trident/spout"
)

// TestPersistentAggregateCombinesBeforeTheRepartition checks the plan of
// a grouped persistent aggregation: the combining runs in the upstream
// group (one partial per group and task crosses), and the GroupBy's own
// repartition, which nothing reads any more, is not planned.
func TestPersistentAggregateCombinesBeforeTheRepartition(t *testing.T) {
	tt := NewTopology("preagg")
	w := tt.NewStream("s", BatchSource(Fields{"sentence"}, func() spout.Batcher { return newFixed(1) })).FlatMap(splitWords, "word")
	st := PersistentAggregate(w.GroupBy("word").Parallelism(3), OpaqueMemory[int64]("c"), Fields{"word"}, count{}, "count")
	groups := tt.plan().groups
	if len(groups) != 2 {
		t.Fatalf("%d groups, want the source's and the committer's: %v", len(groups), groups)
	}
	src, committer := groups[0], groups[1]
	if !slices.ContainsFunc(src.nodes, func(n *node) bool { _, ok := n.op.(*aggregateOp); return ok }) {
		t.Fatal("the source group does not combine before the repartition")
	}
	if !committer.committer || committer.parallelism != 3 {
		t.Fatalf("committer group %v: committer %v, parallelism %d; want a committer with the GroupBy's parallelism 3",
			committer, committer.committer, committer.parallelism)
	}
	if got := st.NewValuesStream().Fields(); !slices.Equal(got, Fields{"word", "count"}) {
		t.Fatalf("new values fields %v, want [word count]", got)
	}
}
