package topology

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/internal/clock"
)

// TestStopWakesWhenTheLastTreeCompletes: Stop waits for pending trees by
// notification, not by polling: it returns at the virtual instant the last
// tree is acked, and leaves no goroutine behind (the bubble would not end).
func TestStopWakesWhenTheLastTreeCompletes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFeed()
		release := make(chan struct{})
		b := NewBuilder()
		b.Spout("feed", f.newSpout).Output("n")
		b.Bolt("hold", boltFunc(func(out *OutputCollector, tp *Tuple) {
			<-release
			out.Ack(tp)
		}).newBolt).Input("feed", Shuffle())
		r := submit(t, mustBuild(t, b), DefaultConfig())
		f.add(1, 1)
		time.Sleep(10 * time.Millisecond)
		synctest.Wait()
		if r.Pending() != 1 {
			t.Fatalf("pending = %d, want the held tree", r.Pending())
		}
		var stopped atomic.Bool
		done := make(chan error)
		go func() {
			err := r.Stop(context.Background())
			stopped.Store(true)
			done <- err
		}()
		synctest.Wait()
		if stopped.Load() {
			t.Fatal("Stop returned with a tree pending")
		}
		start := time.Now()
		close(release)
		synctest.Wait() // no virtual time passes here: a poll would still be sleeping
		if !stopped.Load() {
			t.Fatal("Stop did not wake when the last pending tree was acked")
		}
		if err := <-done; err != nil {
			t.Fatalf("Stop: %v", err)
		}
		if d := time.Since(start); d != 0 {
			t.Fatalf("Stop took %v of virtual time after the ack", d)
		}
		if n := f.ackCount(1); n != 1 {
			t.Fatalf("acked %d times", n)
		}
	})
}

// TestRestartBackoffUsesTheConfiguredClock: the supervisor waits for its
// restart on Config.Clock, so a manual clock decides when the worker
// restarts.
func TestRestartBackoffUsesTheConfiguredClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var opens atomic.Int32
		b := NewBuilder()
		b.Spout("broken", func() Spout { return &openFailSpout{opens: &opens} }).Output("v")
		b.Bolt("sink", boltFunc(ackAll).newBolt).Input("broken", Shuffle())
		clk := clock.NewManual(time.Unix(0, 0))
		cfg := DefaultConfig()
		cfg.Clock = clk
		cfg.RestartMinBackoff = time.Second
		r := submit(t, mustBuild(t, b), cfg)
		defer stop(t, r)
		time.Sleep(time.Minute) // real (virtual) time passes; the manual clock does not
		synctest.Wait()
		if got := opens.Load(); got != 1 {
			t.Fatalf("opened %d times while the manual clock stood still; want 1", got)
		}
		clk.Advance(time.Second)
		synctest.Wait()
		if got := opens.Load(); got != 2 {
			t.Fatalf("opened %d times after advancing the clock by the backoff; want 2", got)
		}
	})
}

// TestSeedMakesEdgeIDsReproducible: with Config.Seed, an executor's ids
// depend only on the seed, the worker's incarnation and its index.
func TestSeedMakesEdgeIDsReproducible(t *testing.T) {
	draw := func(seed uint64, incarnation, idx int) [4]uint64 {
		r := newRand(seed, incarnation, idx)
		return [4]uint64{r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64()}
	}
	first, again := draw(7, 0, 1), draw(7, 0, 1)
	if first != again {
		t.Fatal("one seed gave two sequences")
	}
	if draw(7, 0, 1) == draw(7, 0, 2) || draw(7, 0, 1) == draw(7, 1, 1) || draw(7, 0, 1) == draw(8, 0, 1) {
		t.Fatal("executors, incarnations or seeds share a sequence")
	}
	if random, other := draw(0, 0, 1), draw(0, 0, 1); random == other {
		t.Fatal("seed 0 is not random")
	}
}
