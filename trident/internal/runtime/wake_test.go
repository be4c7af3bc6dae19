package runtime

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/internal/clock"
	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/internal/plan"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// TestMasterAsksPausedSpoutsOnlyWhenABatchCanStart: while the spouts
// hold batches back (a Readier answers false), the master asks them again
// at a tick only if a batch could start at it. While the one batch the
// window allows is held, or while a failed batch waits for its retry
// backoff, it arms no wake-up timer at all (asking every 1 ms tick would
// arm 10,000 timers in 10 s); once a batch can start it asks every tick
// again, so the spouts' readiness is noticed within one BatchEmitInterval.
func TestMasterAsksPausedSpoutsOnlyWhenABatchCanStart(t *testing.T) {
	t.Run("window full", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			held, release := make(chan struct{}), make(chan struct{})
			r := startWakeRig(t, wakeHooks{begin: func(a txn.Attempt) {
				if a.TxID == 1 {
					close(held)
					<-release
				}
			}}, time.Second)
			<-held
			synctest.Wait()
			r.expectNoArms(t, 10*time.Second)
			close(release)
			if err := r.status.WaitCommitted(t.Context(), 1); err != nil {
				t.Fatal(err)
			}
			r.expectPolledEveryTick(t)
		})
	})
	t.Run("retry backoff", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			failed := make(chan struct{})
			var once sync.Once
			r := startWakeRig(t, wakeHooks{finish: func(a txn.Attempt) error {
				if a == (txn.Attempt{TxID: 1}) {
					once.Do(func() { close(failed) })
					return failure.Retryable(errors.New("injected"))
				}
				return nil
			}}, 10*time.Second) // jittered down by at most half: 5 to 10 s
			<-failed
			synctest.Wait()
			start := time.Now()
			r.expectNoArms(t, 4*time.Second)
			r.ready.Store(true)
			if err := r.status.WaitCommitted(t.Context(), 1); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took > 10*time.Second {
				t.Fatalf("the re-run committed %v after the failure; the backoff is at most 10s", took)
			}
		})
	})
}

// wakeRig runs a topology of one source stage, with a window of one
// batch, a 1 ms BatchEmitInterval and an idle wait of an hour (so only the
// master's own timer, acks and fails call NextTuple), over a source whose
// Readier answers true once, then ready's value.
type wakeRig struct {
	ready  atomic.Bool
	asked  atomic.Int64 // Readier calls
	clk    *armCounter
	status *Status
}

// wakeHooks are the stage's operations: begin runs when the stage begins
// an attempt, finish when it finishes one; nil does nothing.
type wakeHooks struct {
	begin  func(txn.Attempt)
	finish func(txn.Attempt) error
}

func startWakeRig(t *testing.T, hooks wakeHooks, backoff time.Duration) *wakeRig {
	r := &wakeRig{clk: &armCounter{Clock: clock.Real()}}
	src := &plan.Node{ID: 0, Kind: plan.Source, Name: "source", Stream: "s", Fields: []string{"x"}}
	lister := readyLister(func() bool { return r.asked.Add(1) == 1 || r.ready.Load() })
	spec := Spec{Name: "wake", Plan: plan.New([]*plan.Node{src}),
		NewProcessor: func(*plan.Stage) Processor { return hookProcessor{hooks} },
		Sources: []Source{{ID: "s",
			NewAllocator: func(coordstore.Store, coordstore.Fence, string) (*spout.Allocator, error) {
				return spout.NewAllocator(spout.AllocatorConfig{Kind: spout.NonTransactional, Partitions: lister})
			},
			NewExecutor: func(coordstore.Store, coordstore.Fence, string, int, int) (spout.Executor, error) {
				return spout.NewBatchExecutor(spout.BatchConfig{Spout: emptyBatcher{}})
			},
		}},
	}
	store := coordstore.NewMemory()
	owner, err := Acquire(t.Context(), store, r.clk, spec.Name)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Store: store, MaxBatchesInFlight: 1, BatchEmitInterval: time.Millisecond,
		CorruptAttempts: 1, RetryBackoff: backoff, MaxRetryBackoff: backoff}
	cfg.Topology.Clock = r.clk
	cfg.Topology.Ackers = 1 // as Trident runs: batches are tracked trees
	cfg.Topology.SpoutIdleWait = time.Hour
	r.status = NewStatus(owner)
	topo, err := Build(spec, cfg, r.status)
	if err != nil {
		t.Fatal(err)
	}
	c := topology.NewLocalCluster()
	if _, err := c.Submit(spec.Name, topo, cfg.Topology); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := c.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	})
	return r
}

// expectNoArms checks that the master arms no timer during d, and that
// the spouts are not asked either.
func (r *wakeRig) expectNoArms(t *testing.T, d time.Duration) {
	t.Helper()
	arms, asked := r.clk.arms.Load(), r.asked.Load()
	time.Sleep(d)
	synctest.Wait()
	if n := r.clk.arms.Load() - arms; n != 0 {
		t.Errorf("the master armed its timer %d times in %v while no batch could start", n, d)
	}
	if n := r.asked.Load() - asked; n != 0 {
		t.Errorf("the master asked the spouts %d times in %v while no batch could start", n, d)
	}
}

// expectPolledEveryTick checks that, with room in the window, the master
// asks spouts that are not ready at every tick, and starts a batch within
// a tick of their becoming ready.
func (r *wakeRig) expectPolledEveryTick(t *testing.T) {
	t.Helper()
	synctest.Wait()
	asked := r.asked.Load()
	time.Sleep(10 * time.Millisecond)
	synctest.Wait()
	if n := r.asked.Load() - asked; n < 9 {
		t.Errorf("the master asked spouts that held batches back %d times in 10 ticks with room in the window; want one per tick", n)
	}
	start := time.Now()
	r.ready.Store(true)
	if err := r.status.WaitCommitted(t.Context(), r.status.Committed()+1); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > time.Millisecond {
		t.Errorf("a batch started %v after the spouts became ready; want within one 1ms tick", took)
	}
}

// readyLister is a Lister of no partitions whose Readier answers f().
type readyLister func() bool

func (readyLister) Partitions(context.Context) ([]spout.Partition, error) { return nil, nil }
func (f readyLister) Ready(context.Context, txn.TxID) bool                { return f() }

// emptyBatcher emits empty batches.
type emptyBatcher struct{}

func (emptyBatcher) EmitBatch(context.Context, txn.Attempt, spout.Collector) error { return nil }
func (emptyBatcher) Ack(context.Context, txn.TxID) error                           { return nil }

// hookProcessor runs wakeHooks.
type hookProcessor struct{ h wakeHooks }

func (hookProcessor) Open(context.Context, *Task) error { return nil }
func (p hookProcessor) Begin(a txn.Attempt) any {
	if p.h.begin != nil {
		p.h.begin(a)
	}
	return nil
}
func (hookProcessor) Source(*Batch, []any) error              { return nil }
func (hookProcessor) Execute(*Batch, plan.Input, []any) error { return nil }
func (p hookProcessor) Finish(bt *Batch) error {
	if p.h.finish != nil {
		return p.h.finish(bt.Attempt)
	}
	return nil
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
