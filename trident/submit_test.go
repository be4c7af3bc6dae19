package trident

import (
	"context"
	"errors"
	"maps"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident/coordstore"
)

// TestZeroConfigRunsWordCount: Config{} needs nothing set (one acker, the
// runtime's timeouts, a local cluster of its own), and Stop shuts that
// cluster down.
func TestZeroConfigRunsWordCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFixed(3, sentences...)
		f := OpaqueMemory[int64]("counts")
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		r, err := wordCount(src, f, 2).Submit(ctx, Config{})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.WaitCommitted(ctx, 4); err != nil {
			t.Fatal(err)
		}
		if got := readCounts(t, f, 2, words()...); !maps.Equal(got, wantCounts()) {
			t.Fatalf("counts = %v, want %v", got, wantCounts())
		}
		if err := r.Stop(ctx); err != nil {
			t.Fatalf("stop: %v", err)
		}
		select {
		case <-r.Done():
		default:
			t.Fatal("Done is open after Stop")
		}
		if r.Health().Running {
			t.Fatal("a worker still runs after Stop")
		}
		if err := r.Stop(ctx); err != nil {
			t.Fatalf("second stop: %v", err)
		}
	})
}

// TestStopOnSharedClusterStopsOnlyItsTopology: with Config.Cluster set,
// Stop kills its own topology and leaves the others running.
func TestStopOnSharedClusterStopsOnlyItsTopology(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := topology.NewLocalCluster()
		defer c.Shutdown(context.Background())
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		first, err := wordCount(newFixed(1, sentences...), OpaqueMemory[int64]("a"), 1).Submit(ctx, Config{Cluster: c})
		if err != nil {
			t.Fatal(err)
		}
		tt := wordCount(newFixed(1, sentences...), OpaqueMemory[int64]("b"), 1)
		tt.name = "wordcount-2"
		second, err := tt.Submit(ctx, Config{Cluster: c})
		if err != nil {
			t.Fatal(err)
		}
		if err := first.WaitCommitted(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if err := first.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if err := second.WaitCommitted(ctx, second.Committed()+2); err != nil {
			t.Fatalf("the other topology stopped with the first: %v", err)
		}
		if err := second.Stop(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// unreachable is a coordination store that is never reachable.
type unreachable struct{ coordstore.Store }

func (unreachable) Acquire(context.Context, string) (coordstore.Generation, error) {
	return 0, failure.Unavailable(errors.New("connection refused"))
}

// TestSubmitContextBoundsOwnership: Submit retries an unreachable store
// until its ctx is done, and says so.
func TestSubmitContextBoundsOwnership(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		start := time.Now()
		_, err := wordCount(newFixed(1), OpaqueMemory[int64]("c"), 1).Submit(ctx, Config{Store: unreachable{coordstore.NewMemory()}})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("submit = %v; want the context's deadline", err)
		}
		if waited := time.Since(start); waited != 5*time.Second {
			t.Fatalf("submit gave up after %v; want the context's 5s", waited)
		}
	})
}
