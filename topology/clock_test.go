package topology

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
)

// epoch is where the manual clocks of these tests start: far from the
// bubble's virtual time, so a reading of the wrong clock shows.
var epoch = time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)

// TestMessageTimeoutUsesTheConfiguredClock: the acker rotates its timeout
// buckets on Config.Clock, so a tree held by a bolt that never acks fails
// only once the manual clock has passed MessageTimeout (twice, since a tree
// times out between one and two timeouts), however much real time passes.
func TestMessageTimeoutUsesTheConfiguredClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.NewManual(epoch)
		f := newFeed()
		f.add(1, "held")
		b := NewBuilder()
		b.Spout("feed", f.newSpout).Output("v")
		b.Bolt("hold", boltFunc(func(*OutputCollector, *Tuple) {}).newBolt).Input("feed", Shuffle())
		cfg := DefaultConfig()
		cfg.Clock = clk
		cfg.MessageTimeout = 10 * time.Second
		r := submit(t, mustBuild(t, b), cfg)
		defer stop(t, r)

		time.Sleep(time.Hour) // real (virtual) time passes; the manual clock does not
		synctest.Wait()
		if r.Pending() != 1 || f.failCount(1) != 0 {
			t.Fatalf("after an hour of real time: pending %d, failed %d; want the tree pending", r.Pending(), f.failCount(1))
		}
		clk.Advance(cfg.MessageTimeout - time.Nanosecond)
		synctest.Wait()
		if f.failCount(1) != 0 {
			t.Fatal("the tree timed out before the manual clock reached MessageTimeout")
		}
		clk.Advance(time.Nanosecond) // first rotation: the tree is now in the oldest bucket
		synctest.Wait()
		if f.failCount(1) != 0 {
			t.Fatal("the tree timed out after one rotation; want between one and two timeouts")
		}
		clk.Advance(cfg.MessageTimeout)
		synctest.Wait()
		if f.failCount(1) != 1 {
			t.Fatalf("failed %d times after two timeouts on the manual clock; want 1", f.failCount(1))
		}
		if got := r.Stats().Components["feed"].TimedOut; got != 1 {
			t.Fatalf("spout TimedOut = %d, want 1", got)
		}
	})
}

// TestCompleteLatencyUsesTheConfiguredClock: a tree's emit time and ack
// time are read from Config.Clock, so its complete latency is what the
// manual clock moved while the bolt held it, not the real time that
// passed.
func TestCompleteLatencyUsesTheConfiguredClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.NewManual(epoch)
		f := newFeed()
		f.add(1, "timed")
		release := make(chan struct{})
		b := NewBuilder()
		b.Spout("feed", f.newSpout).Output("v")
		b.Bolt("hold", boltFunc(func(out *OutputCollector, tp *Tuple) {
			<-release
			out.Ack(tp)
		}).newBolt).Input("feed", Shuffle())
		cfg := DefaultConfig()
		cfg.Clock = clk
		cfg.MessageTimeout = time.Hour
		r := submit(t, mustBuild(t, b), cfg)
		defer stop(t, r)

		synctest.Wait()
		time.Sleep(time.Minute) // real (virtual) time: not part of the latency
		clk.Advance(3 * time.Second)
		close(release)
		synctest.Wait()
		if f.ackCount(1) != 1 {
			t.Fatalf("acked %d times, want 1", f.ackCount(1))
		}
		lat := r.Stats().Components["feed"].CompleteLatency
		// Quantiles are accurate to about 7%.
		if lat.Count != 1 || lat.Max < 2800*time.Millisecond || lat.Max > 3200*time.Millisecond {
			t.Fatalf("complete latency %+v; want one tree of 3s, the manual clock's advance", lat)
		}
	})
}

// TestErrorAndCrashTimesUseTheConfiguredClock: reported errors and
// crashes (from a fatal error and from a panic) are stamped with
// Config.Clock's time.
func TestErrorAndCrashTimesUseTheConfiguredClock(t *testing.T) {
	panicky := func() BasicBolt {
		return BasicBoltFunc(func(tp *Tuple, _ *BasicCollector) error {
			if tp.String("v") == "panic" {
				panic(errBad)
			}
			return basicBehaviour().Execute(tp, nil)
		})
	}
	for _, last := range []string{"fatal", "panic"} {
		t.Run(last, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				clk := clock.NewManual(epoch)
				f := newFeed()
				f.add(1, "report")
				f.add(2, last)
				b := NewBuilder()
				b.Spout("feed", f.newSpout).Output("v")
				b.BasicBolt("basic", panicky).Input("feed", Shuffle())
				cfg := DefaultConfig()
				cfg.Clock = clk
				cfg.RestartMinBackoff = time.Hour // one crash is enough
				r := submit(t, mustBuild(t, b), cfg)
				defer stop(t, r)

				time.Sleep(time.Minute)
				synctest.Wait()
				errs := r.Errors()
				if len(errs) != 1 || !errors.Is(errs[0].Err, errBad) || !failure.IsReported(errs[0].Err) {
					t.Fatalf("errors %+v, want the reported one", errs)
				}
				if !errs[0].Time.Equal(epoch) {
					t.Fatalf("reported error at %v, want the manual clock's %v", errs[0].Time, epoch)
				}
				h := r.Health()
				if h.LastCrash == nil || !errors.Is(h.LastCrash, errBad) {
					t.Fatalf("health %+v, want the %s record's crash", h, last)
				}
				if !h.LastCrash.Time.Equal(epoch) {
					t.Fatalf("crash at %v, want the manual clock's %v", h.LastCrash.Time, epoch)
				}
			})
		})
	}
}

// wakeQueue is a source that receives values on another goroutine and
// wakes the spouts reading it.
type wakeQueue struct {
	mu     sync.Mutex
	values []Values
	calls  atomic.Int64 // NextTuple calls
	wakers []*Wakeup
}

func (q *wakeQueue) push(v Values) {
	q.mu.Lock()
	q.values = append(q.values, v)
	wakers := q.wakers
	q.mu.Unlock()
	for _, w := range wakers {
		w.Notify()
	}
}

func (q *wakeQueue) newSpout() Spout {
	s := &wakeSpout{q: q}
	q.mu.Lock()
	q.wakers = append(q.wakers, &s.Wakeup)
	q.mu.Unlock()
	return s
}

// wakeSpout emits its queue's values untracked and is a Waker.
type wakeSpout struct {
	Wakeup
	q   *wakeQueue
	out *SpoutCollector
}

func (s *wakeSpout) Open(_ context.Context, _ TaskInfo, out *SpoutCollector) error {
	s.out = out
	return nil
}

func (s *wakeSpout) NextTuple() {
	s.q.calls.Add(1)
	s.q.mu.Lock()
	if len(s.q.values) == 0 {
		s.q.mu.Unlock()
		return
	}
	v := s.q.values[0]
	s.q.values = s.q.values[1:]
	s.q.mu.Unlock()
	s.out.Emit(nil, v)
}

func (s *wakeSpout) Ack(any)      {}
func (s *wakeSpout) Fail(any)     {}
func (s *wakeSpout) Close() error { return nil }

// TestWakerEndsTheIdleWait: with an idle wait of an hour, a spout that
// implements Waker is called at the instant it signals work, with one task
// per executor and with two (whose wake-ups are merged).
func TestWakerEndsTheIdleWait(t *testing.T) {
	for _, tasks := range []int{1, 2} {
		t.Run(map[int]string{1: "one task", 2: "two tasks"}[tasks], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := &wakeQueue{}
				var got atomic.Int64
				b := NewBuilder()
				b.Spout("queue", q.newSpout).Output("v").Parallelism(1).Tasks(tasks)
				b.Bolt("sink", boltFunc(func(out *OutputCollector, tp *Tuple) {
					got.Add(1)
					out.Ack(tp)
				}).newBolt).Input("queue", Shuffle())
				cfg := DefaultConfig()
				cfg.SpoutIdleWait = time.Hour
				r := submit(t, mustBuild(t, b), cfg)
				defer stop(t, r)

				time.Sleep(time.Minute)
				synctest.Wait()
				idle := q.calls.Load()
				start := time.Now()
				for i := range 3 {
					q.push(Values{i})
					synctest.Wait() // no virtual time passes: only a wake-up can deliver it
					if got.Load() != int64(i+1) {
						t.Fatalf("value %d not delivered after the wake-up (delivered %d)", i, got.Load())
					}
				}
				if d := time.Since(start); d != 0 {
					t.Fatalf("delivery took %v of virtual time; want none", d)
				}
				if calls := q.calls.Load() - idle; calls > int64(3*(callsPerRound+1)*tasks) {
					t.Fatalf("%d NextTuple calls for 3 wake-ups; want a few rounds each", calls)
				}
			})
		})
	}
}

// TestIdleWaitWithoutWaker is the control: a spout that is not a Waker
// waits out the idle wait before it sees new work.
func TestIdleWaitWithoutWaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFeed()
		var got atomic.Int64
		b := NewBuilder()
		b.Spout("feed", f.newSpout).Output("v")
		b.Bolt("sink", boltFunc(func(out *OutputCollector, tp *Tuple) {
			got.Add(1)
			out.Ack(tp)
		}).newBolt).Input("feed", Shuffle())
		cfg := DefaultConfig()
		cfg.SpoutIdleWait = time.Hour
		r := submit(t, mustBuild(t, b), cfg)
		defer stop(t, r)

		synctest.Wait()
		start := time.Now()
		f.add(1, "late")
		for got.Load() == 0 {
			time.Sleep(time.Minute)
			synctest.Wait()
		}
		if d := time.Since(start); d < 59*time.Minute || d > time.Hour {
			t.Fatalf("delivered after %v of virtual time; want the idle wait of an hour", d)
		}
	})
}

// closedWaker is a Waker whose channel is closed.
type closedWaker struct {
	feedSpout
	c chan struct{}
}

func (s *closedWaker) Wake() <-chan struct{} { return s.c }

// TestClosedWakerChannelIsDropped: a closed wake channel is received from
// once, not in a busy loop (which would keep the bubble from ever
// idling).
func TestClosedWakerChannelIsDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFeed()
		var calls atomic.Int64
		b := NewBuilder()
		b.Spout("closed", func() Spout {
			c := make(chan struct{})
			close(c)
			return &countingSpout{Spout: &closedWaker{feedSpout: feedSpout{f: f}, c: c}, calls: &calls}
		}).Output("v")
		b.Bolt("sink", boltFunc(ackAll).newBolt).Input("closed", Shuffle())
		cfg := DefaultConfig()
		cfg.SpoutIdleWait = time.Hour
		r := submit(t, mustBuild(t, b), cfg)
		defer stop(t, r)
		time.Sleep(time.Minute)
		synctest.Wait()
		if n := calls.Load(); n > 3 {
			t.Fatalf("%d NextTuple calls in a minute of an hour's idle wait", n)
		}
	})
}

// countingSpout counts NextTuple calls and passes Wake through.
type countingSpout struct {
	Spout
	calls *atomic.Int64
}

func (s *countingSpout) NextTuple() { s.calls.Add(1); s.Spout.NextTuple() }

func (s *countingSpout) Wake() <-chan struct{} { return s.Spout.(Waker).Wake() }

// TestSpoutIdleWaitUsesTheConfiguredClock: the idle wait runs on
// Config.Clock, so new work waits for the manual clock to pass
// SpoutIdleWait, however much real time passes.
func TestSpoutIdleWaitUsesTheConfiguredClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.NewManual(epoch)
		f := newFeed()
		var got atomic.Int64
		b := NewBuilder()
		b.Spout("feed", f.newSpout).Output("v")
		b.Bolt("sink", boltFunc(func(out *OutputCollector, tp *Tuple) {
			got.Add(1)
			out.Ack(tp)
		}).newBolt).Input("feed", Shuffle())
		cfg := DefaultConfig()
		cfg.Clock = clk
		cfg.SpoutIdleWait = time.Second
		r := submit(t, mustBuild(t, b), cfg)
		defer stop(t, r)

		synctest.Wait()
		f.add(1, "late")
		time.Sleep(time.Hour)
		synctest.Wait()
		if got.Load() != 0 {
			t.Fatal("delivered while the manual clock stood still")
		}
		clk.Advance(time.Second)
		synctest.Wait()
		if got.Load() != 1 {
			t.Fatalf("delivered %d after the manual clock passed the idle wait; want 1", got.Load())
		}
	})
}
