package trident_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/squallstream/squall/ops"
	"github.com/squallstream/squall/trident"
)

// TestRequireDurableState: with RequireDurableState a topology whose
// state lives in memory halts with ErrVolatileState (a cluster's workers
// set it: a restarted worker would count from zero again), unless it
// says it accepts the loss (AllowVolatileState).
func TestRequireDurableState(t *testing.T) {
	for _, allow := range []bool{false, true} {
		tt := trident.NewTopology("durable")
		words := tt.NewStream("words", trident.FixedSource(trident.Fields{"word"}, [][]any{{"a"}, {"b"}}))
		trident.PersistentAggregate(words.GroupBy("word"), trident.OpaqueMemory[int64]("counts"), trident.Fields{"word"}, ops.Count{}, "count")
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		r, err := tt.Submit(ctx, trident.Config{RequireDurableState: true, AllowVolatileState: allow})
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		if allow {
			if err := r.WaitCommitted(ctx, 1); err != nil {
				t.Errorf("with AllowVolatileState: %v", err)
			}
		} else {
			select {
			case <-r.Halted():
				if err := r.Err(); !errors.Is(err, trident.ErrVolatileState) || !strings.Contains(err.Error(), "AllowVolatileState") {
					t.Errorf("halted with %v, want ErrVolatileState naming AllowVolatileState", err)
				}
			case <-ctx.Done():
				t.Errorf("memory state was not refused (committed %v)", r.Committed())
			}
		}
		r.Stop(ctx)
		cancel()
	}
}
