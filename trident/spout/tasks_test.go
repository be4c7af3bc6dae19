package spout_test

import (
	"slices"
	"testing"

	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/trident/spout/spouttest"
)

func TestAssign(t *testing.T) {
	all := []spout.Partition{"a", "b", "c", "d", "e"}
	for _, tc := range []struct {
		task, n int
		want    []spout.Partition
	}{
		{0, 1, all},
		{0, 2, []spout.Partition{"a", "c", "e"}},
		{1, 2, []spout.Partition{"b", "d"}},
		{2, 3, []spout.Partition{"c"}},
		{5, 6, nil},
		{2, 2, nil}, // out of range
		{-1, 2, nil},
	} {
		if got := spout.Assign(all, tc.task, tc.n); !slices.Equal(got, tc.want) {
			t.Errorf("Assign(task %d of %d) = %v, want %v", tc.task, tc.n, got, tc.want)
		}
	}
}

// Two tasks split the partitions deterministically (sorted, every other
// one), each tells its emitter which partitions it owns, and together they
// emit every record once.
func TestTasksSplitPartitions(t *testing.T) {
	forKinds(t, func(t *testing.T, kind spout.Kind) {
		src := spouttest.NewSource("p3", "p1", "p0", "p2", "p4")
		for _, p := range []spout.Partition{"p0", "p1", "p2", "p3", "p4"} {
			fill(src, p, 2)
		}
		r := newRig(t, kind, ownedStore(), src, 2)
		got := r.batch(at(1, 0))
		want := cat(recs("p0", 0, 2), recs("p2", 0, 2), recs("p4", 0, 2), recs("p1", 0, 2), recs("p3", 0, 2))
		wantRecs(t, "batch 1 (task 0, then task 1)", got, want)
		if o := r.emitters[0].Owned(); !slices.Equal(o, []spout.Partition{"p0", "p2", "p4"}) {
			t.Fatalf("task 0 owns %v", o)
		}
		if o := r.emitters[1].Owned(); !slices.Equal(o, []spout.Partition{"p1", "p3"}) {
			t.Fatalf("task 1 owns %v", o)
		}
	})
}

// A partition that appears while the stream runs is picked up by the next
// batch, from its first record; in this case it moves d from task 0 to
// task 1, which emits d where task 0 left it.
func TestPartitionAddedLater(t *testing.T) {
	forKinds(t, func(t *testing.T, kind spout.Kind) {
		src := spouttest.NewSource("a", "d")
		fill(src, "a", 1)
		fill(src, "d", 1)
		r := newRig(t, kind, ownedStore(), src, 2)
		wantRecs(t, "batch 1", r.batch(at(1, 0)), cat(recs("a", 0, 1), recs("d", 0, 1)))
		src.AddPartition("b")
		fill(src, "b", 2)
		fill(src, "d", 1)
		// Sorted: a b d; task 0 owns a and d, task 1 owns b.
		wantRecs(t, "batch 2", r.batch(at(2, 0)), cat(recs("d", 1, 2), recs("b", 0, 2)))
		if o := r.emitters[1].Owned(); !slices.Equal(o, []spout.Partition{"b"}) {
			t.Fatalf("task 1 owns %v after the new partition", o)
		}
		src.AddPartition("c")
		fill(src, "c", 1)
		fill(src, "d", 1)
		// a b c d: task 0 owns a c, task 1 owns b d.
		wantRecs(t, "batch 3", r.batch(at(3, 0)), cat(recs("c", 0, 1), recs("d", 2, 3)))
	})
}

// When a partition moves to another task while batches that gave it to
// the old task are in flight, the new task cannot know where its next
// batch starts: the partition sits batches out until those committed.
// Nothing is emitted twice or lost.
func TestPartitionMovesWhileInFlight(t *testing.T) {
	forKinds(t, func(t *testing.T, kind spout.Kind) {
		src := spouttest.NewSource("a", "c")
		src.SetMaxBatch(1)
		fill(src, "a", 5)
		fill(src, "c", 5)
		r := newRig(t, kind, ownedStore(), src, 2)
		// Batch 1: a -> task 0, c -> task 1.
		wantRecs(t, "batch 1", r.emit(at(1, 0)), cat(recs("a", 0, 1), recs("c", 0, 1)))
		// b appears: a b c, so c moves to task 0 while batch 1 is in
		// flight. Task 0 sits c out in batch 2.
		src.AddPartition("b")
		fill(src, "b", 1)
		wantRecs(t, "batch 2", r.emit(at(2, 0)), cat(recs("a", 1, 2), recs("b", 0, 1)))
		r.commit(at(1, 0))
		// Batch 1 committed: c's position is in the store.
		wantRecs(t, "batch 3", r.emit(at(3, 0)), cat(recs("a", 2, 3), recs("c", 1, 2)))
		r.commit(at(2, 0))
		// Task 0 recorded "no batch" for c in 2 (a marker), and the
		// success of 2 kept 1's metadata, c's position.
		want := []string{"1=" + meta(0, 1), "2=-", "3=" + meta(1, 2)}
		if kind == spout.Opaque {
			want = want[:2] // 3 is not committing yet
		}
		wantEntries(t, r.store, "c", want...)
		r.commit(at(3, 0))
		wantEntries(t, r.store, "c", "3="+meta(1, 2))
	})
}

// A lagging task: task 1 emits batch 1 only after task 0 emitted batch 2,
// in which c moved from task 1 to task 0. Task 0 must not start c at the
// store's (empty) position.
func TestPartitionMovesFromLaggingTask(t *testing.T) {
	forKinds(t, func(t *testing.T, kind spout.Kind) {
		src := spouttest.NewSource("a", "c")
		src.SetMaxBatch(2)
		fill(src, "a", 4)
		fill(src, "c", 4)
		r := newRig(t, kind, ownedStore(), src, 2)
		ctx := t.Context()
		b1, err := r.alloc.Begin(ctx, at(1, 0))
		if err != nil {
			t.Fatal(err)
		}
		src.AddPartition("b")
		b2, err := r.alloc.Begin(ctx, at(2, 0))
		if err != nil {
			t.Fatal(err)
		}
		var c0, c1 spouttest.Collector
		for _, step := range []struct {
			task int
			b    spout.Batch
			c    *spouttest.Collector
		}{{0, b1, &c0}, {0, b2, &c0}, {1, b1, &c1}, {1, b2, &c1}} {
			if err := r.execs[step.task].EmitBatch(ctx, step.b, step.c); err != nil {
				t.Fatal(err)
			}
		}
		// Task 0: a[0,2) in 1; a[2,4) in 2, c sat out. Task 1: c[0,2) in 1,
		// b (empty) in 2.
		wantRecs(t, "task 0", c0.Records(), recs("a", 0, 4))
		wantRecs(t, "task 1", c1.Records(), recs("c", 0, 2))
		r.commit(at(1, 0))
		r.commit(at(2, 0))
		wantRecs(t, "batch 3", r.batch(at(3, 0)), recs("c", 2, 4))
	})
}

// A moved partition sits out every batch begun before the batch that gave
// it to the old task committed, not only the first one.
func TestMovedPartitionWaitsForCommit(t *testing.T) {
	forKinds(t, func(t *testing.T, kind spout.Kind) {
		src := spouttest.NewSource("a", "c")
		src.SetMaxBatch(1)
		fill(src, "a", 5)
		fill(src, "c", 5)
		r := newRig(t, kind, ownedStore(), src, 2)
		wantRecs(t, "batch 1", r.emit(at(1, 0)), cat(recs("a", 0, 1), recs("c", 0, 1)))
		src.AddPartition("b") // c moves to task 0
		wantRecs(t, "batch 2", r.emit(at(2, 0)), recs("a", 1, 2))
		wantRecs(t, "batch 3", r.emit(at(3, 0)), recs("a", 2, 3))
		r.commit(at(1, 0))
		wantRecs(t, "batch 4", r.emit(at(4, 0)), cat(recs("a", 3, 4), recs("c", 1, 2)))
		r.commit(at(2, 0))
		r.commit(at(3, 0))
		r.commit(at(4, 0))
	})
}
