package spout_test

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/trident/spout/spouttest"
	"github.com/squallstream/squall/txn"
)

// A task whose announcement of batch 1 was lost (a message lost between
// workers, or a task that started while batch 1 was in flight) sees batch
// 2 first. It must not take batch 1 for committed: when the coordinator
// replays batch 1 after its tree failed, the task emits its share, and
// every record lands in exactly one batch.
func TestExecutorMissingAnAnnouncement(t *testing.T) {
	for _, kind := range []spout.Kind{spout.Opaque, spout.Transactional} {
		t.Run(kind.String(), func(t *testing.T) {
			src := spouttest.NewSource("a", "b")
			src.SetMaxBatch(2)
			fill(src, "a", 4)
			fill(src, "b", 4)
			r := newRig(t, kind, ownedStore(), src, 2)
			ctx := context.Background()
			emitTo := func(x spout.Executor, b spout.Batch) ([]rec, error) {
				var c spouttest.Collector
				err := x.EmitBatch(ctx, b, &c)
				return c.Records(), err
			}
			b1, err := r.alloc.Begin(ctx, at(1, 0))
			if err != nil {
				t.Fatal(err)
			}
			b2, err := r.alloc.Begin(ctx, at(2, 0))
			if err != nil {
				t.Fatal(err)
			}
			// Task 0 gets both batches; task 1 ("b") only the second.
			if _, err := emitTo(r.execs[0], b1); err != nil {
				t.Fatal(err)
			}
			if _, err := emitTo(r.execs[0], b2); err != nil {
				t.Fatal(err)
			}
			got, err := emitTo(r.execs[1], b2)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 0 {
				t.Fatalf("task 1 emitted %v in batch 2 without knowing where batch 1 ended", got)
			}
			// Batch 1 fails (its tree never completed) and is replayed with
			// batch 2; then both commit, and batch 3 (a transactional batch 2
			// replays exactly, without "b", which batch 3 then reads).
			var all []rec
			for _, a := range []txn.Attempt{at(1, 1), at(2, 1), at(3, 0)} {
				b, err := r.alloc.Begin(ctx, a)
				if err != nil {
					t.Fatal(err)
				}
				for i, x := range r.execs {
					out, err := emitTo(x, b)
					if errors.Is(err, spout.ErrStale) {
						t.Fatalf("task %d: %v: %v", i, a, err)
					}
					if err != nil {
						t.Fatal(err)
					}
					all = append(all, out...)
				}
				r.commit(a)
			}
			slices.SortFunc(all, func(x, y rec) int {
				return cmp.Or(strings.Compare(string(x.Partition), string(y.Partition)), cmp.Compare(x.Offset, y.Offset))
			})
			wantRecs(t, "batches 1 to 3", all, cat(recs("a", 0, 4), recs("b", 0, 4)))
		})
	}
}
