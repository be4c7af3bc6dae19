package spout_test

import (
	"slices"
	"testing"

	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/trident/spout/spouttest"
	"github.com/squallstream/squall/txn"
)

func TestBatchExecutor(t *testing.T) {
	f := spouttest.NewFixed(2, false, "a", "b", "c")
	x, err := spout.NewBatchExecutor(spout.BatchConfig{Spout: f})
	if err != nil {
		t.Fatal(err)
	}
	c, err := spout.NewAllocator(spout.AllocatorConfig{Kind: spout.NonTransactional})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	emit := func(a txn.Attempt) []any {
		t.Helper()
		b, err := c.Begin(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		var col spouttest.Collector
		if err := x.EmitBatch(ctx, b, &col); err != nil {
			t.Fatal(err)
		}
		var out []any
		for _, tu := range col.Tuples() {
			out = append(out, tu[0])
		}
		return out
	}
	if got := emit(at(1, 0)); !slices.Equal(got, []any{"a", "b"}) {
		t.Fatalf("batch 1 = %v", got)
	}
	if got := emit(at(2, 0)); !slices.Equal(got, []any{"c"}) {
		t.Fatalf("batch 2 = %v", got)
	}
	if got := emit(at(1, 1)); !slices.Equal(got, []any{"a", "b"}) {
		t.Fatalf("replay of 1 = %v", got)
	}
	for _, txid := range []txn.TxID{1, 2} {
		if err := c.BeginCommit(ctx, at(txid, 0)); err != nil {
			t.Fatal(err)
		}
		if err := x.BeginCommit(ctx, at(txid, 0)); err != nil {
			t.Fatal(err)
		}
		if err := c.Success(ctx, txid); err != nil {
			t.Fatal(err)
		}
		if err := x.Success(ctx, txid); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.Acked(); !slices.Equal(got, []txn.TxID{1, 2}) {
		t.Fatalf("acked %v", got)
	}
	if got := emit(at(3, 0)); len(got) != 0 {
		t.Fatalf("batch 3 = %v, want empty", got)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if err := x.EmitBatch(ctx, spout.Batch{Attempt: at(4, 0)}, &spouttest.Collector{}); err == nil {
		t.Fatal("EmitBatch after Close succeeded")
	}
}
