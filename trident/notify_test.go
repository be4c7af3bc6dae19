package trident

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/internal/clock"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/internal/runtime"
)

// TestWaitCommittedWakesOnCommit: WaitCommitted is woken by the commit it
// waits for, at the same virtual instant, not by a poll; commits of lower
// txids wake it without returning; and no goroutine is left behind.
func TestWaitCommittedWakesOnCommit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &Running{status: runtime.NewStatus(coordstore.Fence{Owner: "w"})}
		var returned atomic.Bool
		done := make(chan error, 1)
		go func() {
			err := r.WaitCommitted(context.Background(), 3)
			returned.Store(true)
			done <- err
		}()
		synctest.Wait()
		r.status.SetCommitted(2)
		synctest.Wait()
		if returned.Load() {
			t.Fatal("WaitCommitted(3) returned at txid 2")
		}
		start := time.Now()
		r.status.SetCommitted(3)
		synctest.Wait() // no virtual time passes: a poll would still be sleeping
		if !returned.Load() {
			t.Fatal("WaitCommitted(3) did not wake when txid 3 committed")
		}
		if err := <-done; err != nil || time.Since(start) != 0 {
			t.Fatalf("WaitCommitted = %v after %v", err, time.Since(start))
		}
	})
}

// TestWaitCommittedWakesOnHaltAndCancel: a halt or a cancelled context
// ends the wait at once, with the halting error or the context's.
func TestWaitCommittedWakesOnHaltAndCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &Running{status: runtime.NewStatus(coordstore.Fence{Owner: "w"})}
		halted := make(chan error, 1)
		go func() { halted <- r.WaitCommitted(context.Background(), 1) }()
		ctx, cancel := context.WithCancel(context.Background())
		cancelled := make(chan error, 1)
		go func() { cancelled <- r.WaitCommitted(ctx, 1) }()
		synctest.Wait()
		errHalt := errors.New("halted for the test")
		r.status.Halt(errHalt)
		cancel()
		synctest.Wait()
		select {
		case err := <-halted:
			if !errors.Is(err, errHalt) {
				t.Fatalf("after halt: %v", err)
			}
		default:
			t.Fatal("WaitCommitted did not wake on halt")
		}
		select {
		case err := <-cancelled:
			if !errors.Is(err, context.Canceled) && !errors.Is(err, errHalt) {
				t.Fatalf("after cancel: %v", err)
			}
		default:
			t.Fatal("WaitCommitted did not wake on cancel")
		}
	})
}

// TestMasterUsesTheConfiguredClock: the master starts batches on
// Config.Topology.Clock's time, so with a manual clock that stands still
// no batch after the first starts, however much real time passes, and
// each advance by BatchEmitInterval lets the next one through.
func TestMasterUsesTheConfiguredClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFixed(3, sentences...)
		clk := clock.NewManual(time.Unix(1, 0))
		cfg := Config{IdleBatchInterval: 50 * time.Millisecond} // empty batches too at every advance
		cfg.Topology.Clock = clk
		r := submit(t, wordCount(src, OpaqueMemory[int64]("counts"), 1), cfg)
		time.Sleep(time.Minute)
		synctest.Wait()
		frozen := r.Committed()
		if frozen > 1 {
			t.Fatalf("committed txid %d in a minute of a clock that stood still; want at most 1", frozen)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for want := frozen + 1; want <= frozen+3; want++ {
			clk.Advance(50 * time.Millisecond)
			if err := r.WaitCommitted(ctx, want); err != nil {
				t.Fatalf("after advancing the clock: %v", err)
			}
		}
		if n := r.BatchLatency().Count; n < uint64(frozen+3) {
			t.Fatalf("batch latency counts %d batches; want at least %d", n, frozen+3)
		}
	})
}

// TestMasterWakesItsExecutor: with a spout idle wait of an hour, batches
// still start every BatchEmitInterval and commit at once, because the
// master wakes its executor (topology.Waker) instead of waiting to be
// polled.
func TestMasterWakesItsExecutor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tt := NewTopology("woken")
		s := tt.NewStream("sentences", FixedSource(Fields{"sentence"}, sentenceBatches()...))
		PersistentAggregate(s.Each(Fields{"sentence"}, FunctionFunc(split), "word").GroupBy("word"),
			OpaqueMemory[int64]("counts"), Fields{"word"}, count{}, "count")
		cfg := Config{BatchEmitInterval: 10 * time.Millisecond}
		cfg.Topology.SpoutIdleWait = time.Hour
		start := time.Now()
		r := submit(t, tt, cfg)
		if err := r.WaitCommitted(context.Background(), 5); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took > time.Second {
			t.Fatalf("5 batches took %v of virtual time with an idle wait of an hour: the master waits to be polled", took)
		}
	})
}

// TestMasterArmsNoTimerWhileNothingCanChange: with the one batch the
// window allows held in its processing phase, no tick can change the
// coordinator until that batch is acked or failed, so the master arms no
// wake-up timer however long it waits (a timer armed for every tick would
// fire 10,000 times in these 10 s of 1 ms ticks). Once the batch is let
// go, later batches start every BatchEmitInterval again.
func TestMasterArmsNoTimerWhileNothingCanChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		held, release := make(chan struct{}), make(chan struct{})
		var hold sync.Once
		holdFirst := FunctionFunc(func(ctx context.Context, tp Tuple, out Collector) error {
			hold.Do(func() {
				close(held)
				<-release
			})
			return split.Execute(ctx, tp, out)
		})
		tt := NewTopology("held")
		s := tt.NewStream("sentences", FixedSource(Fields{"sentence"}, sentenceBatches()...))
		PersistentAggregate(s.Each(Fields{"sentence"}, holdFirst, "word").GroupBy("word"),
			OpaqueMemory[int64]("counts"), Fields{"word"}, count{}, "count")
		clk := &armCounter{Clock: clock.Real()}
		cfg := Config{BatchEmitInterval: time.Millisecond}
		cfg.Topology.Clock = clk
		r := submit(t, tt, cfg)
		<-held
		synctest.Wait()
		before := clk.arms.Load()
		time.Sleep(10 * time.Second) // within the 30 s message timeout
		synctest.Wait()
		if n := clk.arms.Load() - before; n != 0 {
			t.Errorf("the master armed its timer %d times in 10 s while no tick could change anything", n)
		}
		close(release)
		start := time.Now()
		if err := r.WaitCommitted(context.Background(), 5); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took > 100*time.Millisecond {
			t.Fatalf("4 batches after the held one took %v of virtual time at a 1 ms emit interval", took)
		}
	})
}

// armCounter is a clock that counts the timers armed through AfterFunc,
// and their resets: in a Trident topology, only the master's wake-up
// timer.
type armCounter struct {
	clock.Clock
	arms atomic.Int64
}

func (c *armCounter) AfterFunc(d time.Duration, f func()) clock.Timer {
	c.arms.Add(1)
	return armedTimer{c.Clock.AfterFunc(d, f), &c.arms}
}

type armedTimer struct {
	clock.Timer
	arms *atomic.Int64
}

func (t armedTimer) Reset(d time.Duration) bool {
	t.arms.Add(1)
	return t.Timer.Reset(d)
}
