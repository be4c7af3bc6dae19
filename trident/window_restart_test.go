package trident

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/squallstream/squall/trident/coordstore/boltstore"
	"github.com/squallstream/squall/trident/windowstore"
	"github.com/squallstream/squall/trident/windowstore/boltwindows"
	"github.com/squallstream/squall/txn"
)

// TestWindowResumesAfterRestart stops a topology with windows part-way
// and submits it again over the same bbolt coordination and windows
// stores: it carries on after the last committed batch, from the
// windows' stored state, and the windows fired across both runs are those
// of one uninterrupted run.
func TestWindowResumesAfterRestart(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var batches [][][]any
	for b := range 12 {
		var batch [][]any
		for i := range 4 {
			batch = append(batch, []any{fmt.Sprint("r", (b+i)%3), base.Add(time.Duration(b*4+i) * 7 * time.Second)})
		}
		batches = append(batches, batch)
	}
	build := func(store WindowsStore, sink *sinkState) *Topology {
		tt := NewTopology("restart-windows")
		s := tt.NewStream("e", FixedSource(Fields{"room", "ts"}, batches...))
		sinkTo(WindowGroups(s.GroupBy("room").Parallelism(2), SlidingDuration(time.Minute, 20*time.Second).EventTime("ts").Name("w"),
			store, Fields{"room"}, Combining[int64](count{}), "n"), sink)
		return tt
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	want := newSink()
	r := submit(t, build(windowstore.NewMemory(), want), Config{BatchEmitInterval: time.Millisecond})
	if err := r.WaitCommitted(ctx, 12); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	got := newSink()
	for _, upTo := range []txn.TxID{5, 12} {
		func() {
			coord, err := boltstore.Open(ctx, filepath.Join(dir, "coord.db"), boltstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer coord.Close()
			ws, err := boltwindows.Open(filepath.Join(dir, "windows.db"), boltwindows.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Close()
			r, err := build(ws, got).Submit(ctx, Config{Store: coord, BatchEmitInterval: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Stop(ctx)
			if err := r.WaitCommitted(ctx, upTo); err != nil {
				t.Fatal(err)
			}
			if err := r.Stop(ctx); err != nil {
				t.Fatal(err)
			}
		}()
	}
	if len(want.rows()) < 10 || !slices.Equal(got.rows(), want.rows()) {
		t.Fatalf("across a restart %q,\nuninterrupted %q", got.rows(), want.rows())
	}
}
