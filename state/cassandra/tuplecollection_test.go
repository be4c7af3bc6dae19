package cassandra_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/squallstream/squall/drpc"
	"github.com/squallstream/squall/ops"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/cassandra"
	"github.com/squallstream/squall/state/cassandra/cassandratest"
	"github.com/squallstream/squall/trident"
)

// writtenBy records, per partition, the keys the maps of a BackingFactory
// were asked to write: the keys trident routed to each partition.
type writtenBy struct {
	mu   sync.Mutex
	keys map[int]map[string]bool
}

// factory wraps newMap so that each map records what it writes.
func (w *writtenBy) factory(newMap trident.BackingFactory) trident.BackingFactory {
	return func(ctx context.Context, p, n int) (state.BackingMap[[]byte], error) {
		m, err := newMap(ctx, p, n)
		if err != nil {
			return nil, err
		}
		return recordingMap{Map: m.(*cassandra.Map), w: w, p: p}, nil
	}
}

// recordingMap is a Cassandra map (its Keys included) whose MultiPut
// records its keys under its partition.
type recordingMap struct {
	*cassandra.Map
	w *writtenBy
	p int
}

func (r recordingMap) MultiPut(ctx context.Context, keys []state.Key, vals [][]byte) error {
	r.w.mu.Lock()
	if r.w.keys[r.p] == nil {
		r.w.keys[r.p] = map[string]bool{}
	}
	for _, k := range keys {
		r.w.keys[r.p][k.String()] = true
	}
	r.w.mu.Unlock()
	return r.Map.MultiPut(ctx, keys, vals)
}

// TestTupleCollectionGetOverCassandra is Storm's TridentWordCount with
// its counts in a Cassandra table held in 3 partitions
// (trident.Opaque over table.Backing), queried through DRPC with
// Broadcast() and ops.TupleCollectionGet: every partition answers from
// its share of the table, so the request gets every word with its count
// exactly once; and each partition's map lists exactly the words trident
// routed to it.
func TestTupleCollectionGetOverCassandra(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	s, _ := pagedSession(t)
	table, err := s.EnsureTable(ctx, cassandra.TableSpec{
		Name: cassandratest.Table(t), Layout: cassandra.Opaque, Values: cassandra.Typed[int64]("bigint"),
		Keys: []cassandra.Column{{Name: "word", Type: "text"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	const parts = 3
	written := &writtenBy{keys: map[int]map[string]bool{}}

	server := drpc.NewServer(drpc.Config{})
	tt := trident.NewTopology("cassandra-tuple-collection")
	batch := make([][]any, len(sentences))
	for i, sen := range sentences {
		batch[i] = []any{sen}
	}
	counts := trident.PersistentAggregate(
		tt.NewStream("sentences", trident.FixedSource(trident.Fields{"sentence"}, batch)).
			Each(trident.Fields{"sentence"}, split, "word").GroupBy("word").Parallelism(parts),
		trident.Opaque[int64]("counts", written.factory(table.Backing)), trident.Fields{"word"}, ops.Count{}, "count")
	all := trident.StateQuery(tt.NewDRPCStream("all", server).Broadcast(), counts, nil,
		ops.TupleCollectionGet[state.MapState[int64]](), "word", "count")
	trident.ReturnResults(all, "all", "word", "count")

	r, err := tt.Submit(ctx, trident.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := r.Stop(ctx); err != nil {
			t.Error(err)
		}
	}()
	if err := r.WaitCommitted(ctx, 1); err != nil {
		t.Fatal(err)
	}

	wantRows := wordCounts()
	res, err := server.Execute(ctx, "all", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]string, len(res.Rows))
	for i, row := range res.Rows {
		got[i] = fmt.Sprintf("%v=%v", row[0], row[1])
	}
	slices.Sort(got)
	if !slices.Equal(got, wantRows) {
		t.Fatalf("all = %v (%d rows)\nwant %v (%d rows)", got, len(got), wantRows, len(wantRows))
	}

	// Each partition lists the words trident routed to it.
	routed := 0
	for p := range parts {
		b, err := table.Backing(ctx, p, parts)
		if err != nil {
			t.Fatal(err)
		}
		listed := map[string]bool{}
		for k, err := range b.(state.KeyLister).Keys(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			listed[k.String()] = true
		}
		written.mu.Lock()
		mine := maps.Clone(written.keys[p])
		written.mu.Unlock()
		if !maps.Equal(listed, mine) {
			t.Errorf("partition %d of %d lists %v, was routed %v", p, parts, slices.Sorted(maps.Keys(listed)), slices.Sorted(maps.Keys(mine)))
		}
		routed += len(mine)
	}
	if routed != len(wantRows) {
		t.Errorf("%d words routed, want %d", routed, len(wantRows))
	}
}

// wordCounts returns "word=count" of sentences, sorted.
func wordCounts() []string {
	n := map[string]int{}
	for _, sen := range sentences {
		for _, w := range strings.Fields(sen.(string)) {
			n[w]++
		}
	}
	var out []string
	for w, c := range n {
		out = append(out, fmt.Sprintf("%s=%d", w, c))
	}
	slices.Sort(out)
	return out
}
