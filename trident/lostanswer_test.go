package trident_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/ops"
	"github.com/squallstream/squall/trident"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/coordstore/faultstore"
)

// TestCoordinatorSwapThatLandedButFailed: the coordinator's record is
// written but the store answers with an error (a lost answer). The
// master's retry then meets its own write as a version conflict: it reads
// the record back, finds what it wrote, and goes on, where it used to
// crash its worker.
func TestCoordinatorSwapThatLandedButFailed(t *testing.T) {
	var swaps, injected atomic.Int64
	lost := faultstore.InjectorFunc(func(op faultstore.Op) faultstore.Fault {
		if op.Method != "SwapCoordinator" {
			return faultstore.Fault{}
		}
		if n := swaps.Add(1); n == 3 || n == 6 {
			injected.Add(1)
			return faultstore.Fault{Err: failure.Retryable(faultstore.ErrInjected), After: true}
		}
		return faultstore.Fault{}
	})
	tt := trident.NewTopology("lost-answer")
	words := tt.NewStream("words", trident.FixedSource(trident.Fields{"word"}, [][]any{{"a"}}, [][]any{{"b"}}, [][]any{{"a"}}))
	trident.PersistentAggregate(words.GroupBy("word"), trident.OpaqueMemory[int64]("counts"), trident.Fields{"word"}, ops.Count{}, "count")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, err := tt.Submit(ctx, trident.Config{Store: faultstore.Wrap(coordstore.NewMemory(), lost), BatchEmitInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop(ctx)
	if err := r.WaitCommitted(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if injected.Load() != 2 {
		t.Fatalf("%d lost answers injected, want 2", injected.Load())
	}
	if h := r.Health(); h.Crashes != 0 {
		t.Fatalf("%d worker crashes (last: %v), want none", h.Crashes, h.LastCrash)
	}
}
