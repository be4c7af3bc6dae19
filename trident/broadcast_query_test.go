package trident_test

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/drpc"
	"github.com/squallstream/squall/ops"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/trident"
)

// stormSentences are the sentences of Storm's TridentWordCount.
var stormSentences = []string{
	"the cow jumped over the moon",
	"the man went to the store and bought some candy",
	"four score and seven years ago",
	"how many apples can you eat",
}

// stormCounts are the counts Storm's word count holds after one pass
// over stormSentences, as "word=count", sorted.
var stormCounts = []string{
	"ago=1", "and=2", "apples=1", "bought=1", "can=1", "candy=1", "cow=1", "eat=1",
	"four=1", "how=1", "jumped=1", "man=1", "many=1", "moon=1", "over=1", "score=1",
	"seven=1", "some=1", "store=1", "the=4", "to=1", "went=1", "years=1", "you=1",
}

// keyOnly hides a query function's EveryPartition, if any: the query is
// routed as any other, so only Broadcast() makes every partition answer.
type keyOnly[S, R any] struct {
	q trident.QueryFunction[S, R]
}

func (k keyOnly[S, R]) BatchRetrieve(ctx context.Context, st S, args []trident.Tuple) ([]R, error) {
	return k.q.BatchRetrieve(ctx, st, args)
}

func (k keyOnly[S, R]) Execute(ctx context.Context, t trident.Tuple, r R, out trident.Collector) error {
	return k.q.Execute(ctx, t, r, out)
}

// broadcastWordCount is Storm's TridentWordCount with its counts in 6
// partitions and four DRPC functions over them:
//
//   - "listed": Broadcast() (with a parallelism hint), then a listing of the state that does not ask
//     for every partition itself (Storm's broadcast().stateQuery(...,
//     new TupleCollectionGet(), ...));
//   - "all": ops.TupleCollectionGet straight on the stream, no Broadcast;
//   - "broadcast-all": Broadcast() and ops.TupleCollectionGet;
//   - "count": the words of the request, each looked up with MapGet in the
//     partition of its key.
func broadcastWordCount(server *drpc.Server) *trident.Topology {
	tt := trident.NewTopology("broadcast-query")
	batch := make([][]any, len(stormSentences))
	for i, s := range stormSentences {
		batch[i] = []any{s}
	}
	split := trident.FunctionFunc(func(_ context.Context, t trident.Tuple, out trident.Collector) error {
		for _, w := range strings.Fields(t.String("args")) {
			out.Emit(w)
		}
		return nil
	})
	counts := trident.PersistentAggregate(
		tt.NewStream("sentences", trident.FixedSource(trident.Fields{"args"}, batch)).
			Each(trident.Fields{"args"}, split, "word").GroupBy("word").Parallelism(6),
		trident.OpaqueMemory[int64]("broadcast-counts"), trident.Fields{"word"}, ops.Count{}, "count")

	list := ops.TupleCollectionGet[state.MapState[int64]]()
	// A hint on a Broadcast read only by queries asks for nothing: it has
	// no tasks of its own to copy the requests.
	// The input field routes the query by key if Broadcast() is ignored.
	listed := trident.StateQuery(tt.NewDRPCStream("listed", server).Broadcast().Parallelism(2), counts, trident.Fields{"args"},
		keyOnly[state.MapState[int64], iter.Seq2[[]any, error]]{list}, "word", "count")
	trident.ReturnResults(listed, "listed", "word", "count")

	all := trident.StateQuery(tt.NewDRPCStream("all", server), counts, nil, list, "word", "count")
	trident.ReturnResults(all, "all", "word", "count")

	both := trident.StateQuery(tt.NewDRPCStream("broadcast-all", server).Broadcast(), counts, nil, list, "word", "count")
	trident.ReturnResults(both, "broadcast-all", "word", "count")

	words := tt.NewDRPCStream("count", server).Each(trident.Fields{"args"}, split, "word")
	keyed := trident.StateQuery(words, counts, trident.Fields{"word"}, ops.MapGet[state.MapState[int64]](), "count")
	trident.ReturnResults(keyed, "count", "word", "count")
	return tt
}

// TestBroadcastStateQuery: through DRPC, a query after Broadcast() (or
// one that asks for every partition) is answered by each of the 6
// partitions of a word count from its own share, so the request gets
// every word's count exactly once, with Storm's values; a keyed MapGet is
// answered by the partition of its key only, once per word.
func TestBroadcastStateQuery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		server := drpc.NewServer(drpc.Config{})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		r, err := broadcastWordCount(server).Submit(ctx, trident.Config{})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Stop(ctx)
		if err := r.WaitCommitted(ctx, 1); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			function, args string
			want           []string
		}{
			{"listed", "", stormCounts},
			{"all", "", stormCounts},
			{"broadcast-all", "", stormCounts},
			{"count", "the cow moon", []string{"cow=1", "moon=1", "the=4"}},
			{"count", "and the nothing", []string{"and=2", "nothing=<nil>", "the=4"}},
		} {
			res, err := server.Execute(ctx, tc.function, tc.args, 0)
			if err != nil {
				t.Fatalf("%s(%q): %v", tc.function, tc.args, err)
			}
			got := make([]string, len(res.Rows))
			for i, row := range res.Rows {
				got[i] = fmt.Sprintf("%v=%v", row[0], row[1])
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s(%q) = %v (%d rows)\nwant %v (%d rows)", tc.function, tc.args, got, len(got), tc.want, len(tc.want))
			}
		}
	})
}
