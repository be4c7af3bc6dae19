package ops_test

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/squallstream/squall/ops"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// batches is a batch spout that emits batches[txid-1] for txid, the same
// tuples on every attempt, and empty batches after the list.
type batches [][][]any

func (b batches) EmitBatch(_ context.Context, a txn.Attempt, c spout.Collector) error {
	if i := int(a.TxID) - 1; i < len(b) {
		for _, row := range b[i] {
			c.Emit(slices.Clone(row)...)
		}
	}
	return nil
}

func (batches) Ack(context.Context, txn.TxID) error { return nil }

// sink records tuples from any task.
type sink struct {
	mu   sync.Mutex
	rows [][]any
}

func (s *sink) peek(t trident.Tuple) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rows = append(s.rows, slices.Clone(t.Values()))
}

func (s *sink) get() [][]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.rows)
}

// lockedBuffer is a bytes.Buffer safe to read while tasks write.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestBuiltinsInATopology runs the built-ins where users run them: counts
// and sums in opaque state, a bad amount going to the dead letters, MapGet
// queries, and the FirstN assembly over three partitions.
func TestBuiltinsInATopology(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sales := batches{
			{{"the", 2}, {"cow", 1}, {nil, 5}, {"the", int64(3)}},
			{{"bad", "x"}, {"moon", uint8(7)}, {"the", 4}},
		}
		queries := batches{nil, nil, {{"the"}, {"bad"}, {"nobody"}}}
		debug := &lockedBuffer{}
		dead := &trident.MemoryDeadLetters{}
		answers, top, lowest, highest := &sink{}, &sink{}, &sink{}, &sink{}

		tt := trident.NewTopology("ops")
		s := tt.NewStream("sales", trident.BatchSource(trident.Fields{"word", "amount"}, func() spout.Batcher { return sales })).
			Filter(ops.FilterNull("word")).
			Filter(ops.Debug("sale", debug))
		g := s.GroupBy("word")
		counts := trident.PersistentAggregate(g, trident.OpaqueMemory[int64]("counts"), trident.Fields{"word"}, ops.Count{}, "count")
		sums := trident.PersistentAggregate(g, trident.OpaqueMemory[int64]("sums"), trident.Fields{"amount"}, ops.Sum[int64]("amount"), "sum")

		q := tt.NewStream("queries", trident.BatchSource(trident.Fields{"word"}, func() spout.Batcher { return queries }))
		q = trident.StateQuery(q, counts, trident.Fields{"word"}, ops.MapGet[state.MapState[int64]](), "count")
		q = trident.StateQuery(q, sums, trident.Fields{"word"}, ops.MapGet[state.MapState[int64]](), "sum")
		q.Peek(answers.peek)

		ops.FirstNOf[int64](s.Shuffle().Parallelism(3), 2, "amount", true).Peek(top.peek)
		ops.LowestOf[int64](s, "amount").Peek(lowest.peek)
		ops.HighestOf[int64](s, "amount").Peek(highest.peek)

		r := runUntil(t, tt, trident.Config{DeadLetters: dead}, 3)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for len(answers.get()) < 3 && ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond)
		}

		got := map[string][2]any{}
		for _, row := range answers.get() {
			got[row[0].(string)] = [2]any{row[1], row[2]}
		}
		want := map[string][2]any{
			"the":    {int64(3), int64(9)},
			"bad":    {int64(1), nil}, // counted, but its amount went to the dead letters
			"nobody": {nil, nil},
		}
		if !maps.Equal(got, want) {
			t.Fatalf("query answers %v, want %v", got, want)
		}

		// FirstN by amount, per batch, best first: batch 1 → the(3),
		// the(2); batch 2 → moon(7), the(4). Batches may complete in
		// either order.
		batch1 := [][]any{{"the", int64(3)}, {"the", 2}}
		batch2 := [][]any{{"moon", uint8(7)}, {"the", 4}}
		gotTop := top.get()
		if !slicesEqual(gotTop, slices.Concat(batch1, batch2)) && !slicesEqual(gotTop, slices.Concat(batch2, batch1)) {
			t.Fatalf("FirstN emitted %v, want %v and %v", gotTop, batch1, batch2)
		}

		// LowestOf and HighestOf: one tuple per batch.
		for name, c := range map[string]struct {
			s    *sink
			a, b [][]any
		}{
			"lowest":  {lowest, [][]any{{"cow", 1}}, [][]any{{"the", 4}}},
			"highest": {highest, [][]any{{"the", int64(3)}}, [][]any{{"moon", uint8(7)}}},
		} {
			got := c.s.get()
			if !slicesEqual(got, slices.Concat(c.a, c.b)) && !slicesEqual(got, slices.Concat(c.b, c.a)) {
				t.Fatalf("%s emitted %v, want %v and %v", name, got, c.a, c.b)
			}
		}

		letters := dead.Letters()
		if len(letters) != 4 || r.Rejected() != 4 {
			t.Fatalf("%d letters, %d rejected; want 4 (Sum, FirstNOf, LowestOf and HighestOf each reject the bad amount)", len(letters), r.Rejected())
		}
		for _, l := range letters {
			if !errors.Is(l.Err, ops.ErrBadValue) || l.Values[1] != "x" {
				t.Fatalf("letter %+v: want the bad amount", l)
			}
		}

		out := debug.String()
		if strings.Contains(out, "word=nil") || !strings.Contains(out, "sale: word=\"moon\" amount=7\n") {
			t.Fatalf("debug output %q: want the sales after FilterNull", out)
		}
	})
}

// runUntil submits tt with cfg to a local cluster, which is shut down
// when the test ends, and waits until txid is committed.
func runUntil(t *testing.T, tt *trident.Topology, cfg trident.Config, txid txn.TxID) *trident.Running {
	t.Helper()
	c := topology.NewLocalCluster()
	cfg.Cluster = c
	r, err := tt.Submit(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = c.Shutdown(ctx)
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := r.WaitCommitted(ctx, txid); err != nil {
		t.Fatal(err)
	}
	return r
}

func slicesEqual(a, b [][]any) bool {
	return slices.EqualFunc(a, b, func(x, y []any) bool { return slices.Equal(x, y) })
}
