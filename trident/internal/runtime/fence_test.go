package runtime

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/internal/clock"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/coordstore/faultstore"
)

// TestAcquireWaitsOnTheConfiguredClock: a retryable Acquire failure is
// retried after a backoff measured on the given clock, so with a manual
// clock that stands still the retry waits, however much real time
// passes, and an advance lets it through.
func TestAcquireWaitsOnTheConfiguredClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.NewManual(time.Unix(1, 0))
		store := faultstore.Wrap(coordstore.NewMemory(), faultstore.FailNth(1))
		done := make(chan error, 1)
		go func() {
			_, err := Acquire(context.Background(), store, clk, "t")
			done <- err
		}()
		time.Sleep(time.Hour) // virtual: the system clock moves, the manual one does not
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("Acquire returned %v before the clock moved", err)
		default:
		}
		if clk.Timers() != 1 || store.Calls() != 1 {
			t.Fatalf("%d timers, %d store calls; want the backoff after one failed call", clk.Timers(), store.Calls())
		}
		clk.Advance(time.Second)
		if err := <-done; err != nil {
			t.Fatalf("Acquire after the backoff: %v", err)
		}
		if store.Calls() != 2 {
			t.Fatalf("%d store calls, want the failed one and the retry", store.Calls())
		}
	})
}
