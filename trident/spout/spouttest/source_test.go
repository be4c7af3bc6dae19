package spouttest_test

import (
	"errors"
	"slices"
	"testing"

	"go.uber.org/goleak"

	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/trident/spout/spouttest"
	"github.com/squallstream/squall/txn"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSource(t *testing.T) {
	ctx := t.Context()
	s := spouttest.NewSource("b", "a")
	if ps, _ := s.Partitions(ctx); !slices.Equal(ps, []spout.Partition{"a", "b"}) {
		t.Fatalf("Partitions = %v", ps)
	}
	if o := s.Append("a", "x", "y", "z"); o != 0 {
		t.Fatalf("first offset %d", o)
	}
	e := s.Emitter()
	var c spouttest.Collector
	a := txn.Attempt{TxID: 1}
	s.SetMaxBatch(2)
	m, err := e.Emit(ctx, a, "a", nil, &c)
	if err != nil || m != (spouttest.Offsets{First: 0, Next: 2}) || m.Len() != 2 {
		t.Fatalf("Emit = %+v, %v", m, err)
	}
	s.SetLimit(func(a txn.Attempt, _ spout.Partition) int { return 1 + int(a.N) })
	m2, _ := e.Emit(ctx, txn.Attempt{TxID: 2, N: 5}, "a", &m, &c)
	if m2 != (spouttest.Offsets{First: 2, Next: 3}) {
		t.Fatalf("second Emit = %+v", m2)
	}
	if err := e.Reemit(ctx, a, "a", m, &c); err != nil {
		t.Fatal(err)
	}
	want := []spouttest.Record{{"a", 0, "x"}, {"a", 1, "y"}, {"a", 2, "z"}, {"a", 0, "x"}, {"a", 1, "y"}}
	if got := c.Records(); !slices.Equal(got, want) {
		t.Fatalf("records %v, want %v", got, want)
	}
	if r, ok := spouttest.RecordOf([]any{"a", 1}); ok {
		t.Fatalf("RecordOf a short tuple = %v", r)
	}

	s.Truncate("a", 1)
	if err := e.Reemit(ctx, a, "a", m, &c); !errors.Is(err, spout.ErrUnavailable) {
		t.Fatalf("Reemit of truncated records = %v", err)
	}
	if err := e.Reemit(ctx, a, "a", spouttest.Offsets{First: 2, Next: 9}, &c); !errors.Is(err, spout.ErrUnavailable) {
		t.Fatalf("Reemit past the end = %v", err)
	}
	s.SetLimit(nil)
	s.SetMaxBatch(0)
	if m, _ := e.Emit(ctx, a, "a", nil, &c); m != (spouttest.Offsets{First: 1, Next: 3}) || s.Reset() != 0 {
		t.Fatalf("Emit without prev after truncation = %+v", m)
	}
	if m, _ := e.Emit(ctx, a, "a", &spouttest.Offsets{Next: 0}, &c); m.First != 1 || s.Reset() != 1 {
		t.Fatalf("Emit from a deleted position = %+v, reset %d", m, s.Reset())
	}
	if _, err := e.Emit(ctx, a, "a", &spouttest.Offsets{Next: 7}, &c); err == nil {
		t.Fatal("Emit past the end succeeded")
	}
	if recs := s.Records("a"); len(recs) != 2 || recs[0].Offset != 1 || s.End("a") != 3 {
		t.Fatalf("Records after truncation = %v", recs)
	}

	boom := errors.New("boom")
	s.SetFault(func(c spouttest.Call) error {
		if c.Op == "reemit" {
			return boom
		}
		return nil
	})
	if err := e.Reemit(ctx, a, "a", spouttest.Offsets{First: 1, Next: 2}, &c); !errors.Is(err, boom) {
		t.Fatalf("faulted Reemit = %v", err)
	}
	s.RemovePartition("a")
	if _, err := e.Emit(ctx, a, "a", nil, &c); err == nil {
		t.Fatal("Emit of a removed partition succeeded")
	}
	if err := e.Refresh(ctx, []spout.Partition{"b"}); err != nil || !slices.Equal(e.Owned(), []spout.Partition{"b"}) {
		t.Fatalf("Refresh: %v, owned %v", err, e.Owned())
	}
	if n := len(s.Calls()); n != 6 {
		t.Fatalf("%d successful calls recorded, want 6", n)
	}
	e.Close()
	if _, err := e.Emit(ctx, a, "b", nil, &c); !errors.Is(err, spout.ErrClosed) || !e.Closed() {
		t.Fatalf("Emit after Close = %v", err)
	}
}

func TestFixed(t *testing.T) {
	ctx := t.Context()
	f := spouttest.NewFixed(2, true, 1, 2, 3)
	var c spouttest.Collector
	for _, a := range []txn.Attempt{{TxID: 1}, {TxID: 2}, {TxID: 1, N: 1}, {TxID: 3}} {
		if err := f.EmitBatch(ctx, a, &c); err != nil {
			t.Fatal(err)
		}
	}
	var got []any
	for _, tu := range c.Tuples() {
		got = append(got, tu[0])
	}
	if want := []any{1, 2, 3, 1, 2, 1, 2}; !slices.Equal(got, want) {
		t.Fatalf("tuples %v, want %v", got, want)
	}
	f.Ack(ctx, 1)
	c.Reset()
	f.EmitBatch(ctx, txn.Attempt{TxID: 1, N: 2}, &c) // acked: a new batch
	if len(c.Tuples()) != 1 || c.Tuples()[0][0] != 3 {
		t.Fatalf("after ack: %v", c.Tuples())
	}
	c.ReportError(errors.New("x"))
	if len(c.Errors()) != 1 || len(f.Acked()) != 1 || f.Acked()[0] != 1 {
		t.Fatal("errors or acks not recorded")
	}
	f.Close()
	if err := f.EmitBatch(ctx, txn.Attempt{TxID: 9}, &c); !errors.Is(err, spout.ErrClosed) {
		t.Fatalf("EmitBatch after Close = %v", err)
	}
}

// appender is a spout.Collector that appends to every tuple it is given,
// as a collector that keeps values may, and records the first value.
type appender struct{ firsts []any }

func (a *appender) Emit(values ...any) {
	values = append(values, "appended")
	a.firsts = append(a.firsts, values[0])
}
func (a *appender) ReportError(error) {}

// TestFixedEmitsInPlace: Fixed emits its values without a slice per value
// or a copy per batch, and a collector appending to a tuple it was given
// does not overwrite the next value.
func TestFixedEmitsInPlace(t *testing.T) {
	ctx := t.Context()
	f := spouttest.NewFixed(3, false, "a", "b", "c")
	var a appender
	if err := f.EmitBatch(ctx, txn.Attempt{TxID: 1}, &a); err != nil {
		t.Fatal(err)
	}
	if err := f.EmitBatch(ctx, txn.Attempt{TxID: 1, N: 1}, &a); err != nil { // a replay
		t.Fatal(err)
	}
	if want := []any{"a", "b", "c", "a", "b", "c"}; !slices.Equal(a.firsts, want) {
		t.Fatalf("emitted %v, want %v", a.firsts, want)
	}
	var none discard
	if n := testing.AllocsPerRun(100, func() {
		f.EmitBatch(ctx, txn.Attempt{TxID: 1, N: 2}, none)
	}); n != 0 {
		t.Fatalf("%v allocations per replayed batch of 3 values", n)
	}
}

// discard is a spout.Collector that keeps nothing.
type discard struct{}

func (discard) Emit(...any)       {}
func (discard) ReportError(error) {}
