package trident

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// ackUntilStopped is a batch spout whose Ack of a committed batch waits
// until the worker stops and then returns the context's error, as a
// source cleaning up over the network would.
type ackUntilStopped struct{ fixedBatchSpout }

func (s *ackUntilStopped) Ack(ctx context.Context, _ txn.TxID) error {
	<-ctx.Done()
	return ctx.Err()
}

// TestCleanStopReportsNothing: a source call that the stop of the worker
// ends with context.Canceled is neither shown to operators
// (Running.Errors) nor logged as a warning.
func TestCleanStopReportsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logged bytes.Buffer
		src := &ackUntilStopped{*newFixed(1, sentences...)}
		tt := NewTopology("clean-stop")
		tt.NewStream("s", BatchSource(Fields{"sentence"}, func() spout.Batcher { return src }))
		cfg := Config{}
		cfg.Topology.Logger = slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelWarn}))
		r, err := tt.Submit(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := r.WaitCommitted(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if err := r.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if errs := r.Errors(); len(errs) != 0 || logged.Len() != 0 {
			t.Fatalf("a clean stop reported %v and logged:\n%s", errs, logged.String())
		}
	})
}
