package cassandrawindows_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/squallstream/squall/ops"
	"github.com/squallstream/squall/state/cassandra/cassandratest"
	"github.com/squallstream/squall/trident"
	"github.com/squallstream/squall/trident/windowstore"
	"github.com/squallstream/squall/trident/windowstore/cassandrawindows"
)

// TestTopology runs grouped sliding event-time windows over Cassandra
// and over memory, and compares what they fired.
func TestTopology(t *testing.T) {
	s := cassandratest.Session(t)
	cs, err := cassandrawindows.Open(t.Context(), s, cassandrawindows.Options{Table: cassandratest.Table(t)})
	if err != nil {
		t.Fatal(err)
	}
	want := runWindows(t, windowstore.NewMemory())
	got := runWindows(t, cs)
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Fatalf("over Cassandra %q,\nover memory %q", got, want)
	}
}

func runWindows(t *testing.T, store trident.WindowsStore) []string {
	base := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	var batches [][][]any
	for b := range 12 {
		var batch [][]any
		for i := range 5 {
			batch = append(batch, []any{fmt.Sprint("room-", (b+i)%3), base.Add(time.Duration(b*5+i) * 17 * time.Second)})
		}
		batches = append(batches, batch)
	}
	tt := trident.NewTopology("cassandrawindows")
	src := tt.NewStream("events", trident.FixedSource(trident.Fields{"room", "ts"}, batches...))
	out := trident.WindowGroups(src.GroupBy("room").Parallelism(2),
		trident.SlidingDuration(2*time.Minute, 30*time.Second).EventTime("ts").AllowedLateness(20*time.Second).Name(t.Name()),
		store, trident.Fields{"room"}, trident.Combining[int64](ops.Count{}), "n")
	var mu sync.Mutex
	var rows []string
	out.Peek(func(tu trident.Tuple) {
		mu.Lock()
		defer mu.Unlock()
		rows = append(rows, fmt.Sprint(tu.Values()...))
	})
	cfg := trident.Config{BatchEmitInterval: time.Millisecond}
	r, err := tt.Submit(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := r.WaitCommitted(ctx, 14); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	sort.Strings(rows)
	return slices.Compact(rows) // a replayed commit emits its windows again
}
