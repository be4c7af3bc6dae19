package spout_test

import (
	"testing"

	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/trident/spout/spouttest"
)

// A restarted opaque spout resumes after the last committed batch: what
// was emitted but not committed is emitted again, with what came since.
func TestOpaqueRestartResumes(t *testing.T) {
	src := spouttest.NewSource("a", "b")
	fill(src, "a", 2)
	fill(src, "b", 2)
	store := ownedStore()
	r := newRig(t, spout.Opaque, store, src, 2)
	r.batch(at(1, 0))
	fill(src, "a", 1)
	r.emit(at(2, 0)) // never committed
	fill(src, "b", 1)
	r.restart(2)
	wantRecs(t, "first batch after restart", r.emit(at(2, 1)), cat(recs("a", 2, 3), recs("b", 2, 3)))
	r.commit(at(2, 1))
	// Restart with another number of tasks.
	fill(src, "a", 1)
	r.restart(1)
	wantRecs(t, "batch 3", r.batch(at(3, 0)), recs("a", 3, 4))
}

// A restarted transactional spout replays the batches emitted before the
// crash exactly, even with another number of tasks, and then continues.
func TestTransactionalRestartReplays(t *testing.T) {
	src := spouttest.NewSource("a", "b", "c")
	src.SetMaxBatch(1)
	for _, p := range []spout.Partition{"a", "b", "c"} {
		fill(src, p, 3)
	}
	store := ownedStore()
	r := newRig(t, spout.Transactional, store, src, 2)
	r.batch(at(1, 0))
	two := r.emit(at(2, 0))
	three := r.emit(at(3, 0))
	src.SetMaxBatch(0)
	fill(src, "a", 2)
	r.restart(3)
	wantRecs(t, "replay of 2", sortRecs(r.emit(at(2, 1))), sortRecs(two))
	wantRecs(t, "replay of 3", sortRecs(r.emit(at(3, 1))), sortRecs(three))
	r.commit(at(2, 1))
	r.commit(at(3, 1))
	wantRecs(t, "batch 4", r.batch(at(4, 0)), recs("a", 3, 5))
}
