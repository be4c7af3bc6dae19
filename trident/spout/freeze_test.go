package spout_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/trident/spout/spouttest"
)

// The commit-freeze rule: once an opaque batch entered its commit phase,
// every replay of its txid emits exactly what the attempt that began the
// commit emitted, even though Storm's rule (start again from the previous
// batch's end) would read more records now.
func TestFrozenReplayAfterFailedCommit(t *testing.T) {
	src := spouttest.NewSource("p")
	src.SetMaxBatch(2)
	fill(src, "p", 3)
	r := newRig(t, spout.Opaque, ownedStore(), src, 1)
	r.batch(at(1, 0))
	first := r.emit(at(2, 0))
	wantRecs(t, "batch 2", first, recs("p", 2, 3))
	r.beginCommit(at(2, 0))
	// The state commit of 2 writes some keys and fails; the source grows.
	fill(src, "p", 4)
	for n := uint32(1); n <= 2; n++ {
		got, b, err := r.tryEmit(at(2, n))
		if err != nil {
			t.Fatal(err)
		}
		if !b.Frozen {
			t.Fatalf("replay %d of a batch that began its commit is not frozen", n)
		}
		wantRecs(t, "replay of the frozen batch", got, first)
		r.beginCommit(at(2, n))
	}
	calls := src.Calls()
	if last := calls[len(calls)-1]; last.Op != "reemit" || last.Meta != (offsets{First: 2, Next: 3}) {
		t.Fatalf("last emitter call %+v, want a reemit of [2, 3)", last)
	}
	r.success(2)
	wantRecs(t, "batch 3", r.batch(at(3, 0)), recs("p", 3, 5))
}

// A crash during the commit: the restarted spout finds the frozen batch
// in the store and re-emits it exactly.
func TestFrozenReplayAfterCrash(t *testing.T) {
	src := spouttest.NewSource("a", "b")
	fill(src, "a", 2)
	fill(src, "b", 1)
	store := ownedStore()
	r := newRig(t, spout.Opaque, store, src, 2)
	first := r.emit(at(1, 0))
	r.beginCommit(at(1, 0))
	fill(src, "a", 2)
	fill(src, "b", 2)
	r.restart(2)
	wantRecs(t, "replay after restart", r.emit(at(1, 1)), first)
	r.commit(at(1, 1))
	wantRecs(t, "batch 2", r.batch(at(2, 0)), cat(recs("a", 2, 4), recs("b", 1, 3)))
}

// A frozen batch keeps its partition set: a partition that appears before
// the replay joins with the next batch.
func TestFrozenPartitionSet(t *testing.T) {
	src := spouttest.NewSource("a", "c")
	fill(src, "a", 1)
	fill(src, "c", 1)
	r := newRig(t, spout.Opaque, ownedStore(), src, 2)
	first := r.emit(at(1, 0))
	r.beginCommit(at(1, 0))
	src.AddPartition("b") // would move c from task 1 to task 0
	fill(src, "b", 1)
	got, b, err := r.tryEmit(at(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Partitions) != 2 {
		t.Fatalf("replay partitions %v, want the frozen [a c]", b.Partitions)
	}
	wantRecs(t, "replay", got, first)
	r.commit(at(1, 1))
	wantRecs(t, "batch 2", r.batch(at(2, 0)), recs("b", 0, 1))
}

// Before its commit phase, an opaque replay lists the partitions again.
func TestOpaqueReplayListsPartitions(t *testing.T) {
	src := spouttest.NewSource("a")
	fill(src, "a", 1)
	r := newRig(t, spout.Opaque, ownedStore(), src, 1)
	wantRecs(t, "batch 1", r.emit(at(1, 0)), recs("a", 0, 1))
	src.AddPartition("b")
	fill(src, "b", 1)
	wantRecs(t, "replay", r.emit(at(1, 1)), cat(recs("a", 0, 1), recs("b", 0, 1)))
	src.RemovePartition("b")
	wantRecs(t, "second replay", r.emit(at(1, 2)), recs("a", 0, 1))
}

// A transactional replay reuses the partition set of the first attempt.
func TestTransactionalReplayKeepsPartitions(t *testing.T) {
	src := spouttest.NewSource("a")
	fill(src, "a", 1)
	r := newRig(t, spout.Transactional, ownedStore(), src, 1)
	first := r.emit(at(1, 0))
	src.AddPartition("b")
	fill(src, "b", 1)
	wantRecs(t, "replay", r.emit(at(1, 1)), first)
	r.commit(at(1, 1))
	wantRecs(t, "batch 2", r.batch(at(2, 0)), recs("b", 0, 1))
}

// A partition that sat a frozen batch out (its position was not known)
// sits out every replay too, although its position is known by then.
func TestFrozenSkippedPartition(t *testing.T) {
	src := spouttest.NewSource("a", "c")
	src.SetMaxBatch(1)
	fill(src, "a", 4)
	fill(src, "c", 4)
	r := newRig(t, spout.Opaque, ownedStore(), src, 2)
	r.emit(at(1, 0))
	src.AddPartition("b")
	first := r.emit(at(2, 0)) // c moved to task 0 and sits out
	wantRecs(t, "batch 2", first, cat(recs("a", 1, 2), recs("b", 0, 0)))
	r.commit(at(1, 0))
	r.beginCommit(at(2, 0))
	wantEntries(t, r.store, "c", "1="+meta(0, 1), "2=-")
	wantRecs(t, "replay of 2", r.emit(at(2, 1)), first)
	r.commit(at(2, 1))
	wantRecs(t, "batch 3", r.batch(at(3, 0)), cat(recs("a", 2, 3), recs("c", 1, 2)))
}

// A frozen batch whose records were deleted cannot be replayed: the error
// is reported, names the partition and the txid, and matches
// ErrUnavailable. The same holds for a transactional replay.
func TestReplayUnavailable(t *testing.T) {
	forKinds(t, func(t *testing.T, kind spout.Kind) {
		src := spouttest.NewSource("p")
		fill(src, "p", 4)
		r := newRig(t, kind, ownedStore(), src, 1)
		r.emit(at(1, 0))
		r.beginCommit(at(1, 0))
		src.Truncate("p", 2) // retention
		_, _, err := r.tryEmit(at(1, 1))
		if !errors.Is(err, spout.ErrUnavailable) || !failure.IsReported(err) {
			t.Fatalf("replay of deleted records: %v (kind %s), want a reported ErrUnavailable", err, failure.KindOf(err))
		}
		var pe *spout.PartitionError
		if !errors.As(err, &pe) || pe.Partition != "p" || pe.TxID != 1 || pe.Op != "reemit" || pe.Stream != stream {
			t.Fatalf("error %#v does not name partition p and txid 1", pe)
		}
		if msg := err.Error(); !strings.Contains(msg, "partition p txid 1") {
			t.Fatalf("message %q does not name partition and txid", msg)
		}
	})
}

// Retention is no error for new opaque batches: they start at the oldest
// record left, as Kafka's earliest reset does.
func TestOpaqueNewBatchAfterRetention(t *testing.T) {
	src := spouttest.NewSource("p")
	src.SetMaxBatch(1)
	fill(src, "p", 4)
	r := newRig(t, spout.Opaque, ownedStore(), src, 1)
	r.batch(at(1, 0))
	src.Truncate("p", 3)
	wantRecs(t, "batch 2", r.batch(at(2, 0)), recs("p", 3, 4))
	if src.Reset() != 2 {
		t.Fatalf("%d records skipped, want 2", src.Reset())
	}
}
