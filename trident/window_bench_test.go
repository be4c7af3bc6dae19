package trident

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/squallstream/squall/internal/clock"
	"github.com/squallstream/squall/trident/internal/exec"
	"github.com/squallstream/squall/trident/windowstore"
	"github.com/squallstream/squall/trident/windowstore/boltwindows"
	"github.com/squallstream/squall/txn"
)

// BenchmarkWindowCommit measures one batch's commit of grouped sliding
// event-time windows (15 minutes every minute, 12 rooms) at steady state:
// each batch holds perBatch tuples over 10 seconds of event time, so
// about 90·perBatch tuples are kept between batches, and a window fires
// per room every sixth batch. The record of each batch (the kept tuples
// and the fired windows) is rewritten whole: its size is reported.
func BenchmarkWindowCommit(b *testing.B) {
	for _, store := range []string{"memory", "bbolt"} {
		for _, perBatch := range []int{10, 100} {
			b.Run(fmt.Sprintf("store=%s/perBatch=%d", store, perBatch), func(b *testing.B) {
				var st WindowsStore = windowstore.NewMemory()
				if store == "bbolt" {
					bs, err := boltwindows.Open(filepath.Join(b.TempDir(), "w.db"), boltwindows.Options{})
					if err != nil {
						b.Fatal(err)
					}
					defer bs.Close()
					st = bs
				}
				benchWindowCommit(b, st, perBatch)
			})
		}
	}
}

func benchWindowCommit(b *testing.B, st WindowsStore, perBatch int) {
	ctx := context.Background()
	tt := NewTopology("bench")
	s := tt.NewStream("e", FixedSource(Fields{"room", "person", "ts"}))
	WindowGroups(s.GroupBy("room"), SlidingDuration(15*time.Minute, time.Minute).EventTime("ts").Name("w"), st,
		Fields{"person"}, Combining[int64](count{}), "n")
	n := tt.nodes[len(tt.nodes)-1]
	task, err := n.op.(*exec.Persist).P.(exec.ClockedPersister).OpenClocked(ctx, 0, 1, clock.Real())
	if err != nil {
		b.Fatal(err)
	}
	base := time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC)
	var txid txn.TxID
	out := &captureCollector{}
	batch := func() {
		txid++
		acc := task.NewBatch()
		for i := range perBatch {
			ts := base.Add(time.Duration(txid)*10*time.Second + time.Duration(i)*10*time.Second/time.Duration(perBatch))
			if err := acc.Add([]any{fmt.Sprint("room-", i%12), fmt.Sprint("p-", i), ts}); err != nil {
				b.Fatal(err)
			}
		}
		out.emitted = out.emitted[:0]
		if err := task.Commit(ctx, txid, acc, out); err != nil {
			b.Fatal(err)
		}
	}
	for range 120 { // 20 minutes of event time: past the first windows
		batch()
	}
	b.ResetTimer()
	for b.Loop() {
		batch()
	}
	b.StopTimer()
	_, rec, err := st.Last(ctx, windowID("w", 0), txid+1)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(rec)), "record-bytes")
}
