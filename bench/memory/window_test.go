package memory

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/squallstream/squall/ops"
	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/trident/spout/spouttest"
	"github.com/squallstream/squall/trident/windowstore"
	"github.com/squallstream/squall/txn"
)

// windowBase is the event time of the first tuple; tuples follow 10 ms
// apart, all inside one 24-hour tumbling window that never fires.
var windowBase = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

// event turns a tuple number into (room, person, ts).
func event(_ context.Context, t trident.Tuple, out trident.Collector) error {
	i := t.Get("i").(int)
	out.Emit(fmt.Sprintf("room-%02d", i%12), fmt.Sprintf("p-%05d", i%50_000), windowBase.Add(time.Duration(i)*10*time.Millisecond))
	return nil
}

// BenchmarkWindowTupleMemory runs a topology that feeds (room, person, ts)
// tuples, 1,000 a batch, into WindowGroups by room over a 24-hour
// tumbling event-time window with the in-memory window store, a count per
// window; no window fires, so every tuple stays open. It reports the
// growth of the live heap between the commit of batch 20 and of batch
// 20 + tuples/1,000, per tuple (bytes/open-tuple): the tuple as the window
// keeps it plus its share of the batch's stored record (rewritten whole
// each batch, the previous one pruned).
func BenchmarkWindowTupleMemory(b *testing.B) {
	for _, tuples := range []int{50_000, 100_000} {
		b.Run(fmt.Sprintf("tuples=%d", tuples), func(b *testing.B) {
			var growths []float64
			for b.Loop() {
				growths = append(growths, windowGrowth(b, tuples))
			}
			b.Logf("per run: %.1f", growths)
			b.ReportMetric(median(growths), "bytes/open-tuple")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// windowGrowth runs the topology once and returns the heap bytes per
// tuple kept between the two measured commits.
func windowGrowth(b *testing.B, tuples int) float64 {
	b.Helper()
	const per, first = 1000, 20
	total := (first+4)*per + tuples // a few batches past the second reading
	values := make([]any, total)
	for i := range values {
		values[i] = i
	}
	ctx := context.Background()
	tt := trident.NewTopology("window-memory")
	src := trident.BatchSource(trident.Fields{"i"}, func() spout.Batcher { return spouttest.NewFixed(per, false, values...) })
	s := tt.NewStream("events", src).Each(trident.Fields{"i"}, trident.FunctionFunc(event), "room", "person", "ts")
	trident.WindowGroups(s.GroupBy("room"), trident.TumblingDuration(24*time.Hour).EventTime("ts"), windowstore.NewMemory(),
		trident.Fields{"person"}, trident.Combining[int64](ops.Count{}), "n")
	c := topology.NewLocalCluster()
	cfg := trident.Config{Cluster: c}
	r, err := tt.Submit(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := c.Shutdown(context.Background()); err != nil {
			b.Error(err)
		}
	}()
	wait, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := r.WaitCommitted(wait, first); err != nil {
		b.Fatal(err)
	}
	// Batches go on while the heap is read; Committed says how many
	// tuples are open at each reading.
	before, at0 := liveHeap(), r.Committed()
	if err := r.WaitCommitted(wait, first+txn.TxID(tuples/per)); err != nil {
		b.Fatal(err)
	}
	after, at1 := liveHeap(), r.Committed()
	runtime.KeepAlive(values)
	return (float64(after) - float64(before)) / float64(int(at1-at0)*per)
}
