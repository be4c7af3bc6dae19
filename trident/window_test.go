package trident

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/trident/windowstore"
	"github.com/squallstream/squall/txn"
)

// sinkState keeps the tuples of a stream per txid, as transactional state
// would: a replay of a txid replaces what the txid wrote. rows is what
// the committed batches emitted, exactly once each. It also checks that a
// commit replayed after it completed here writes the same rows again (the
// rule for state fed by new values), and records the txids that did not.
type sinkState struct {
	mu      sync.Mutex
	cur     txn.TxID
	byTx    map[txn.TxID][][]any
	done    map[txn.TxID]string // the rows of each completed commit, printed
	changed []txn.TxID          // txids whose replayed commit wrote other rows
}

func newSink() *sinkState {
	return &sinkState{byTx: map[txn.TxID][][]any{}, done: map[txn.TxID]string{}}
}

func (s *sinkState) BeginCommit(_ context.Context, txid txn.TxID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cur, s.byTx[txid] = txid, nil
	return nil
}

func (s *sinkState) Commit(_ context.Context, txid txn.TxID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var rows []string
	for _, r := range s.byTx[txid] {
		rows = append(rows, fmt.Sprint(r...))
	}
	sort.Strings(rows)
	printed := fmt.Sprint(rows)
	if prev, ok := s.done[txid]; ok && prev != printed {
		s.changed = append(s.changed, txid)
	}
	s.done[txid] = printed
	return nil
}

// replaysChanged returns the txids whose replayed commit wrote other rows.
func (s *sinkState) replaysChanged() []txn.TxID {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.changed)
}

// rows returns every row, printed, sorted.
func (s *sinkState) rows() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, rows := range s.byTx {
		for _, r := range rows {
			out = append(out, fmt.Sprint(r...))
		}
	}
	sort.Strings(out)
	return out
}

type sinkUpdater struct{}

func (sinkUpdater) UpdateState(_ context.Context, s *sinkState, tuples []Tuple, _ Collector) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, tu := range tuples {
		s.byTx[s.cur] = append(s.byTx[s.cur], slices.Clone(tu.Values()))
	}
	return nil
}

// sinkTo persists s (globally) into sink.
func sinkTo(s *Stream, sink *sinkState) {
	PartitionPersist(s.Global(), func(context.Context, int, int) (*sinkState, error) { return sink, nil },
		s.Fields(), StateUpdater[*sinkState](sinkUpdater{}))
}

// sumN sums the int64 field "n".
type sumN struct{}

func (sumN) Init(t Tuple) (int64, error) { return t.Get("n").(int64), nil }
func (sumN) Combine(a, b int64) int64    { return a + b }
func (sumN) Zero() int64                 { return 0 }

func runUntil(t *testing.T, tt *Topology, cfg Config, txid txn.TxID) *Running {
	t.Helper()
	r := submit(t, tt, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	if err := r.WaitCommitted(ctx, txid); err != nil {
		t.Fatal(err, r.Errors(), r.Health())
	}
	return r
}

func TestWindowTumblingAndSlidingCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		batches := [][][]any{{{1}, {2}}, {{3}, {4}, {5}}, {}, {{6}, {7}}}
		tt := NewTopology("counts")
		s := tt.NewStream("n", FixedSource(Fields{"n"}, batches...))
		tumbling, sliding := newSink(), newSink()
		sinkTo(Window(s, TumblingCount(3).Name("tumbling"), windowstore.NewMemory(), Fields{"n"}, Combining[int64](sumN{}), "sum"), tumbling)
		sinkTo(Window(s, SlidingCount(3, 2).Name("sliding"), windowstore.NewMemory(), Fields{"n"}, Combining[int64](sumN{}), "sum"), sliding)
		runUntil(t, tt, Config{}, 6)
		// Within a batch, tuples are ordered by their encoding: 1..7 here.
		if got, want := tumbling.rows(), []string{"0 3 6", "3 6 15"}; !slices.Equal(got, want) {
			t.Errorf("tumbling = %q, want %q", got, want)
		}
		if got, want := sliding.rows(), []string{"-2 1 1", "0 3 6", "2 5 12", "4 7 18"}; !slices.Equal(got, want) {
			t.Errorf("sliding = %q, want %q", got, want)
		}
	})
}

func TestWindowEventTimeGroups(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		at := func(min int) time.Time { return time.Date(2026, 1, 1, 10, min, 0, 0, time.UTC) }
		batches := [][][]any{
			{{"a", at(1)}, {"b", at(2)}, {"a", at(4)}},
			{{"a", at(11)}, {"b", at(3)}}, // b at 3 is within the allowed lateness
			{{"b", at(17)}},               // the watermark passes 10:10: [10:00, 10:10) fires
			{{"a", at(5)}, {"a", at(40)}}, // a at 5 is late and dropped; [10:10, 10:20) fires
		}
		tt := NewTopology("events")
		s := tt.NewStream("e", FixedSource(Fields{"room", "ts"}, batches...))
		sink := newSink()
		store := windowstore.NewMemory()
		out := WindowGroups(s.GroupBy("room"), TumblingDuration(10*time.Minute).EventTime("ts").AllowedLateness(5*time.Minute).Name("w"),
			store, Fields{"room"}, Combining[int64](count{}), "n")
		if got := out.Fields(); !slices.Equal(got, Fields{"room", WindowStart, WindowEnd, "n"}) {
			t.Fatalf("fields %v", got)
		}
		sinkTo(out, sink)
		runUntil(t, tt, Config{}, 6)
		f := func(room string, from, to, n int) string { return fmt.Sprint(room, at(from), at(to), n) }
		want := []string{f("a", 0, 10, 2), f("a", 10, 20, 1), f("b", 0, 10, 2), f("b", 10, 20, 1)}
		sort.Strings(want)
		if got := sink.rows(); !slices.Equal(got, want) {
			t.Errorf("rows = %q,\nwant %q", got, want)
		}
		late, err := WindowLate(context.Background(), store, "w", 0)
		if err != nil || late != 1 {
			t.Errorf("late = %d, %v; want 1", late, err)
		}
	})
}

// TestWindowProcessingTime: with the batches' processing time (virtual),
// every tuple lands in exactly one tumbling window, and windows fire on
// empty batches once their time has passed.
func TestWindowProcessingTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var batches [][][]any
		for i := range 20 {
			batches = append(batches, [][]any{{int64(i)}, {int64(100)}})
		}
		tt := NewTopology("ptime")
		s := tt.NewStream("n", FixedSource(Fields{"n"}, batches...))
		sink := newSink()
		sinkTo(Window(s, TumblingDuration(time.Second), windowstore.NewMemory(), Fields{"n"}, Combining[int64](sumN{}), "sum"), sink)
		cfg := Config{BatchEmitInterval: 300 * time.Millisecond}
		r := runUntil(t, tt, cfg, 20)
		if err := r.WaitCommitted(context.Background(), r.Committed()+10); err != nil {
			t.Fatal(err)
		}
		var total int64
		for _, row := range sink.byTxRows() {
			total += row[2].(int64)
			if end, start := row[1].(time.Time), row[0].(time.Time); end.Sub(start) != time.Second || start.Truncate(time.Second) != start {
				t.Errorf("window [%v, %v)", start, end)
			}
		}
		if want := int64(20*100 + 19*20/2); total != want {
			t.Errorf("windows sum to %d, want %d (rows %q)", total, want, sink.rows())
		}
	})
}

func (s *sinkState) byTxRows() [][]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out [][]any
	for _, rows := range s.byTx {
		out = append(out, rows...)
	}
	return out
}

func TestWindowBuildErrors(t *testing.T) {
	tt := NewTopology("bad")
	s := tt.NewStream("n", FixedSource(Fields{"n", "ts"}))
	mem := windowstore.NewMemory()
	agg := Combining[int64](sumN{})
	Window(s, TumblingCount(0), mem, Fields{"n"}, agg, "sum")
	Window(s, SlidingDuration(time.Minute, time.Hour), mem, Fields{"n"}, agg, "sum")
	Window(s, TumblingCount(3).EventTime("ts"), mem, Fields{"n"}, agg, "sum")
	Window(s, TumblingDuration(time.Minute).AllowedLateness(time.Second), mem, Fields{"n"}, agg, "sum")
	Window(s, TumblingDuration(time.Minute).EventTime("nope"), mem, Fields{"n"}, agg, "sum")
	Window(s, TumblingCount(3), nil, Fields{"n"}, agg, "sum")
	Window(s, TumblingCount(3), mem, Fields{"n"}, agg, WindowStart)
	Window(s, TumblingCount(3), mem, Fields{"n"}, agg)
	Window(s, TumblingCount(3).Name("twice"), mem, Fields{"n"}, agg, "sum")
	Window(s, TumblingCount(4).Name("twice"), mem, Fields{"n"}, agg, "sum")
	_, err := tt.Submit(context.Background(), Config{})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"length 0", "slide", "EventTime(\"ts\") on a count window", "lateness applies to event time only",
		"nope", "nil windows store", "\"windowStart\" is empty or repeated", "no output fields",
		"a window named \"twice\" already exists"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

var _ state.State = (*sinkState)(nil)

// TestWindowRejectsBadEventTime: a tuple whose event-time field is not a
// time.Time goes to the dead letters; the others are windowed.
func TestWindowRejectsBadEventTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		at := func(s int) time.Time { return time.Date(2026, 1, 1, 0, 0, s, 0, time.UTC) }
		tt := NewTopology("bad-times")
		s := tt.NewStream("e", FixedSource(Fields{"n", "ts"},
			[][]any{{1, at(1)}, {2, "yesterday"}, {3, at(2)}},
			[][]any{{4, at(30)}}))
		sink := newSink()
		sinkTo(Window(s, TumblingDuration(10*time.Second).EventTime("ts"), windowstore.NewMemory(), Fields{"n"}, Combining[int64](sumN{}), "sum"), sink)
		dlq := &MemoryDeadLetters{}
		runUntil(t, tt, Config{DeadLetters: dlq}, 3)
		if got, want := sink.rows(), []string{fmt.Sprint(at(0), at(10), 4)}; !slices.Equal(got, want) {
			t.Errorf("rows %q, want %q", got, want)
		}
		letters := dlq.Letters()
		if len(letters) != 1 || letters[0].Values[1] != "yesterday" || !strings.Contains(letters[0].Err.Error(), "not a time.Time") {
			t.Errorf("dead letters %+v", letters)
		}
	})
}
