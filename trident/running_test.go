package trident

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/trident/spout"
)

// TestInFlightActiveAndConfig: while an operation holds every batch,
// MaxBatchesInFlight batches are in flight; once released and
// deactivated, none. Active follows Deactivate and Activate, and Config
// is the effective configuration.
func TestInFlightActiveAndConfig(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFixed(1, sentences...)
		gate := make(chan struct{})
		tt := NewTopology("inflight")
		s := tt.NewStream("sentences", BatchSource(Fields{"sentence"}, func() spout.Batcher { return src }))
		g := s.Each(Fields{"sentence"}, FunctionFunc(func(ctx context.Context, tu Tuple, out Collector) error {
			<-gate
			for _, w := range strings.Fields(tu.String("sentence")) {
				out.Emit(w)
			}
			return nil
		}), "word").GroupBy("word")
		PersistentAggregate(g, OpaqueMemory[int64]("counts"), Fields{"word"}, count{}, "count")
		cfg := Config{MaxBatchesInFlight: 3}
		r := submit(t, tt, cfg)

		if !r.Active() {
			t.Fatal("not active after submit")
		}
		c := r.Config()
		if c.MaxBatchesInFlight != 3 || c.BatchEmitInterval != 50*time.Millisecond ||
			c.RetryBackoff != DefaultRetryBackoff || c.MaxRetryBackoff != DefaultMaxRetryBackoff ||
			c.Topology.Ackers != 1 || c.Topology.BatchSize != 256 || c.Topology.MessageTimeout != 30*time.Second ||
			c.Topology.SpoutIdleWait != DefaultSpoutIdleWait || c.Topology.MaxSpoutPending != 0 {
			t.Fatalf("config = %+v", c)
		}

		time.Sleep(time.Second)
		synctest.Wait()
		if n := r.InFlight(); n != 3 {
			t.Fatalf("%d batches in flight while held, want 3", n)
		}
		if r.Committed() != 0 {
			t.Fatalf("committed %v while held", r.Committed())
		}

		close(gate)
		r.Deactivate()
		if r.Active() {
			t.Fatal("active after Deactivate")
		}
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if n := r.InFlight(); n != 0 || r.Committed() < 3 {
			t.Fatalf("after release: %d in flight, committed %v", n, r.Committed())
		}
		r.Activate()
		if !r.Active() {
			t.Fatal("not active after Activate")
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_ = r.Stop(ctx)
	})
}
