package cassandra_test

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/squallstream/squall/ops"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/cassandra"
	"github.com/squallstream/squall/state/cassandra/cassandratest"
	"github.com/squallstream/squall/state/nontransactional"
	"github.com/squallstream/squall/state/opaque"
	"github.com/squallstream/squall/state/transactional"
	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/trident/spout/spouttest"
)

var sentences = []any{
	"the cow jumped over the moon",
	"the man went to the store and bought some candy",
	"four score and seven years ago",
	"how many apples can you eat",
}

var split = trident.FunctionFunc(func(_ context.Context, tu trident.Tuple, out trident.Collector) error {
	for _, w := range strings.Fields(tu.String("sentence")) {
		out.Emit(w)
	}
	return nil
})

// TestMapStateWordCount is Storm's Cassandra MapState test: a fixed batch
// spout with four sentences in batches of three, split, grouped by word and
// counted with persistentAggregate into Cassandra tables of each flavour,
// through table.Backing; the counts read back from the tables match.
func TestMapStateWordCount(t *testing.T) {
	want := map[string]int64{"the": 4, "cow": 1, "moon": 1, "man": 1, "four": 1, "apples": 1, "and": 2, "absent": 0}
	for _, tc := range []struct {
		name    string
		layout  cassandra.Layout
		values  cassandra.Mapper
		factory func(string, trident.BackingFactory) trident.StateFactory[int64]
		read    func(state.BackingMap[[]byte]) state.MapState[int64]
	}{
		{"opaque", cassandra.Opaque, cassandra.Typed[int64]("bigint"), trident.Opaque[int64],
			func(b state.BackingMap[[]byte]) state.MapState[int64] {
				return opaque.New[int64](b, state.MapOptions[int64]{})
			}},
		{"transactional", cassandra.Transactional, nil, trident.Transactional[int64],
			func(b state.BackingMap[[]byte]) state.MapState[int64] {
				return transactional.New[int64](b, state.MapOptions[int64]{})
			}},
		{"nontransactional", cassandra.NonTransactional, nil, trident.NonTransactional[int64],
			func(b state.BackingMap[[]byte]) state.MapState[int64] {
				return nontransactional.New[int64](b, state.MapOptions[int64]{})
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			table, err := cassandratest.Session(t).EnsureTable(ctx, cassandra.TableSpec{
				Name: cassandratest.Table(t), Layout: tc.layout, Values: tc.values,
				Keys: []cassandra.Column{{Name: "word", Type: "text"}},
			})
			if err != nil {
				t.Fatal(err)
			}
			tt := trident.NewTopology("wordcount")
			src := spouttest.NewFixed(3, false, sentences...)
			s := tt.NewStream("sentences", trident.BatchSource(trident.Fields{"sentence"}, func() spout.Batcher { return src }))
			g := s.Each(trident.Fields{"sentence"}, split, "word").GroupBy("word")
			g.Parallelism(2)
			trident.PersistentAggregate(g, tc.factory("counts", table.Backing), trident.Fields{"word"}, ops.Count{}, "count")
			cluster := topology.NewLocalCluster()
			defer func() {
				if err := cluster.Shutdown(ctx); err != nil {
					t.Error(err)
				}
			}()
			r, err := tt.Submit(ctx, trident.Config{Cluster: cluster})
			if err != nil {
				t.Fatal(err)
			}
			if err := r.WaitCommitted(ctx, 4); err != nil {
				t.Fatal(err)
			}
			b, err := table.Open(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got := readCounts(t, tc.read(b), want)
			if !maps.Equal(got, want) {
				t.Fatalf("counts = %v, want %v", got, want)
			}
		})
	}
}

// readCounts reads the counts of the words of want (0 when absent).
func readCounts(t *testing.T, m state.MapState[int64], want map[string]int64) map[string]int64 {
	t.Helper()
	var words []string
	var keys []state.Key
	for w := range want {
		words = append(words, w)
		keys = append(keys, state.MustKey(w))
	}
	es, err := m.MultiGet(t.Context(), keys)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for i, w := range words {
		got[w] = es[i].Val
	}
	return got
}
