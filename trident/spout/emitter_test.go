package spout_test

import (
	"context"
	"testing"

	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/trident/spout/spouttest"
)

// The cases of storm-kafka-client's KafkaTridentSpoutEmitterEmitTest,
// for both partitioned flavours.

func TestNewBatchWithoutMetadata(t *testing.T) {
	forKinds(t, func(t *testing.T, kind spout.Kind) {
		src := spouttest.NewSource("p")
		fill(src, "p", 3)
		r := newRig(t, kind, ownedStore(), src, 1)
		wantRecs(t, "first batch", r.batch(at(1, 0)), recs("p", 0, 3))
		calls := src.Calls()
		if calls[0].Op != "refresh" || calls[1].Op != "emit" || calls[1].Prev != nil {
			t.Fatalf("calls = %+v, want a refresh, then an emit without previous metadata", calls)
		}
		wantEntries(t, r.store, "p", "1="+meta(0, 3))
	})
}

func TestNewBatchFromPreviousMetadata(t *testing.T) {
	forKinds(t, func(t *testing.T, kind spout.Kind) {
		src := spouttest.NewSource("p")
		src.SetMaxBatch(2)
		fill(src, "p", 5)
		r := newRig(t, kind, ownedStore(), src, 1)
		wantRecs(t, "batch 1", r.batch(at(1, 0)), recs("p", 0, 2))
		wantRecs(t, "batch 2", r.batch(at(2, 0)), recs("p", 2, 4))
		calls := src.Calls()
		last := calls[len(calls)-1]
		if last.Prev == nil || *last.Prev != (offsets{First: 0, Next: 2}) {
			t.Fatalf("batch 2 emitted with prev %+v, want batch 1's [0, 2)", last.Prev)
		}
		wantRecs(t, "batch 3", r.batch(at(3, 0)), recs("p", 4, 5))
	})
}

func TestEmptyBatchesKeepPosition(t *testing.T) {
	forKinds(t, func(t *testing.T, kind spout.Kind) {
		src := spouttest.NewSource("p")
		fill(src, "p", 2)
		r := newRig(t, kind, ownedStore(), src, 1)
		wantRecs(t, "batch 1", r.batch(at(1, 0)), recs("p", 0, 2))
		for txid := 2; txid <= 11; txid++ {
			if got := r.batch(at(tx(txid), 0)); len(got) != 0 {
				t.Fatalf("empty batch %d emitted %s", txid, fmtRecs(got))
			}
			wantEntries(t, r.store, "p", entry(txid, meta(2, 2)))
		}
		fill(src, "p", 3)
		wantRecs(t, "batch 12", r.batch(at(12, 0)), recs("p", 2, 5))
	})
}

// A transactional replay re-emits exactly the recorded range, even though
// the source has more records now (testReEmitBatch).
func TestTransactionalReplayIsExact(t *testing.T) {
	src := spouttest.NewSource("p")
	fill(src, "p", 2)
	r := newRig(t, spout.Transactional, ownedStore(), src, 1)
	first := r.emit(at(1, 0))
	wantRecs(t, "attempt 0", first, recs("p", 0, 2))
	fill(src, "p", 5)
	for n := uint32(1); n <= 3; n++ {
		wantRecs(t, "replay", r.emit(at(1, n)), first)
	}
	r.commit(at(1, 3))
	wantRecs(t, "batch 2", r.batch(at(2, 0)), recs("p", 2, 7))
}

// An opaque replay starts from the end of the previous batch and may hold
// more records than the first attempt.
func TestOpaqueReplayMayDiffer(t *testing.T) {
	src := spouttest.NewSource("p")
	src.SetMaxBatch(2)
	fill(src, "p", 3)
	r := newRig(t, spout.Opaque, ownedStore(), src, 1)
	wantRecs(t, "batch 1", r.batch(at(1, 0)), recs("p", 0, 2))
	wantRecs(t, "batch 2", r.emit(at(2, 0)), recs("p", 2, 3))
	// Batch 2 fails during processing; the source grows meanwhile.
	src.SetMaxBatch(0)
	fill(src, "p", 4)
	wantRecs(t, "replay of 2", r.emit(at(2, 1)), recs("p", 2, 7))
	r.commit(at(2, 1))
	wantEntries(t, r.store, "p", "2="+meta(2, 7))
}

// With batches in flight, an opaque batch continues from the previous
// batch as emitted, not from the store; a replay of the second batch
// starts at the first one's end.
func TestOpaquePipelined(t *testing.T) {
	src := spouttest.NewSource("p")
	src.SetMaxBatch(2)
	fill(src, "p", 5)
	r := newRig(t, spout.Opaque, ownedStore(), src, 1)
	wantRecs(t, "batch 1", r.emit(at(1, 0)), recs("p", 0, 2))
	wantRecs(t, "batch 2", r.emit(at(2, 0)), recs("p", 2, 4))
	wantEntries(t, r.store, "p") // nothing stored before a commit
	// 2 fails; 1 is still in flight and commits later.
	src.SetMaxBatch(3)
	wantRecs(t, "replay of 2", r.emit(at(2, 1)), recs("p", 2, 5))
	r.commit(at(1, 0))
	r.commit(at(2, 1))
	wantEntries(t, r.store, "p", "2="+meta(2, 5))
}

// An opaque batch's metadata reaches the store only when the batch enters
// its commit phase.
func TestOpaqueStoresAtCommit(t *testing.T) {
	src := spouttest.NewSource("a", "b")
	fill(src, "a", 2)
	fill(src, "b", 1)
	r := newRig(t, spout.Opaque, ownedStore(), src, 2)
	r.emit(at(1, 0))
	for _, p := range []string{"a", "b", "$partitions"} {
		wantEntries(t, r.store, p)
	}
	r.beginCommit(at(1, 0))
	wantEntries(t, r.store, "a", "1="+meta(0, 2))
	wantEntries(t, r.store, "b", "1="+meta(0, 1))
	wantEntries(t, r.store, "$partitions", `1=["a","b"]`)
}

// A transactional batch's metadata is stored before its first tuple
// leaves the executor, and its partition set before it is emitted.
func TestTransactionalStoresBeforeEmit(t *testing.T) {
	src := spouttest.NewSource("p")
	fill(src, "p", 2)
	store := ownedStore()
	r := newRig(t, spout.Transactional, store, src, 1)
	ctx := context.Background()
	b, err := r.alloc.Begin(ctx, at(1, 0))
	if err != nil {
		t.Fatal(err)
	}
	wantEntries(t, store, "$partitions", `1=["p"]`)
	wantEntries(t, store, "p")
	seen := 0
	c := &spouttest.Collector{OnEmit: func([]any) {
		seen++
		wantEntries(t, store, "p", "1="+meta(0, 2))
	}}
	if err := r.execs[0].EmitBatch(ctx, b, c); err != nil {
		t.Fatal(err)
	}
	if seen != 2 {
		t.Fatalf("%d tuples emitted, want 2", seen)
	}
}

// Success deletes the metadata before the committed txid and keeps its
// own, which is where the next batch starts.
func TestSuccessCleansUp(t *testing.T) {
	forKinds(t, func(t *testing.T, kind spout.Kind) {
		src := spouttest.NewSource("p")
		src.SetMaxBatch(1)
		fill(src, "p", 5)
		r := newRig(t, kind, ownedStore(), src, 1)
		for txid := 1; txid <= 3; txid++ {
			r.emit(at(tx(txid), 0))
		}
		r.commit(at(1, 0))
		r.commit(at(2, 0))
		if kind == spout.Transactional {
			wantEntries(t, r.store, "p", "2="+meta(1, 2), "3="+meta(2, 3))
		} else {
			wantEntries(t, r.store, "p", "2="+meta(1, 2))
		}
		r.commit(at(3, 0))
		wantEntries(t, r.store, "p", "3="+meta(2, 3))
		wantEntries(t, r.store, "$partitions", `3=["p"]`)
	})
}
