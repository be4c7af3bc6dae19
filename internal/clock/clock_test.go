package clock

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

func TestManualStandsStillUntilAdvanced(t *testing.T) {
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	m := NewManual(start)
	if !m.Now().Equal(start) {
		t.Fatalf("Now = %v, want %v", m.Now(), start)
	}
	m.Advance(time.Second)
	if got := Since(m, start); got != time.Second {
		t.Fatalf("Since(start) = %v after Advance(1s)", got)
	}
}

func TestManualTimersFireAtTheirDeadline(t *testing.T) {
	m := NewManual(time.Unix(0, 0))
	short, long := m.NewTimer(10*time.Millisecond), m.NewTimer(time.Second)
	fired := func(tm Timer) bool {
		select {
		case <-tm.C():
			return true
		default:
			return false
		}
	}
	m.Advance(9 * time.Millisecond)
	if fired(short) || fired(long) {
		t.Fatal("a timer fired before its deadline")
	}
	m.Advance(time.Millisecond)
	if !fired(short) || fired(long) {
		t.Fatal("at 10ms: want only the short timer fired")
	}
	if m.Timers() != 1 {
		t.Fatalf("%d timers pending, want 1", m.Timers())
	}
	if !long.Stop() || long.Stop() {
		t.Fatal("Stop of a pending timer: want true once, then false")
	}
	m.Advance(time.Hour)
	if fired(long) {
		t.Fatal("a stopped timer fired")
	}
	if !fired(m.NewTimer(0)) {
		t.Fatal("a timer of 0 did not fire at once")
	}
}

func TestOrDefaultsToReal(t *testing.T) {
	if _, ok := Or(nil).(realClock); !ok {
		t.Fatal("Or(nil) is not the real clock")
	}
	m := NewManual(time.Time{})
	if Or(m) != Clock(m) {
		t.Fatal("Or(m) is not m")
	}
	before := time.Now()
	if Real().Now().Before(before) {
		t.Fatal("the real clock went back")
	}
	tm := Real().NewTimer(time.Millisecond)
	<-tm.C()
}

func received(c <-chan time.Time) (time.Time, bool) {
	select {
	case t := <-c:
		return t, true
	default:
		return time.Time{}, false
	}
}

func TestManualTimerReset(t *testing.T) {
	start := time.Unix(0, 0)
	m := NewManual(start)
	tm := m.NewTimer(time.Second)
	m.Advance(time.Second)
	// Reset of a timer that fired drains the time nobody received.
	if tm.Reset(time.Minute) {
		t.Fatal("Reset of a fired timer reported it pending")
	}
	if _, ok := received(tm.C()); ok {
		t.Fatal("a stale time was received after Reset")
	}
	m.Advance(59 * time.Second)
	if _, ok := received(tm.C()); ok {
		t.Fatal("the reset timer fired before its new deadline")
	}
	if !tm.Reset(time.Second) {
		t.Fatal("Reset of a pending timer reported it idle")
	}
	m.Advance(time.Second)
	if at, ok := received(tm.C()); !ok || !at.Equal(start.Add(61*time.Second)) {
		t.Fatalf("after the reset: received %v %v, want the deadline 61s", at, ok)
	}
	tm.Reset(0)
	if _, ok := received(tm.C()); !ok {
		t.Fatal("Reset(0) did not fire at once")
	}
}

func TestManualTicker(t *testing.T) {
	start := time.Unix(0, 0)
	m := NewManual(start)
	tk := m.NewTicker(10 * time.Second)
	m.Advance(9 * time.Second)
	if _, ok := received(tk.C()); ok {
		t.Fatal("ticked before the first period")
	}
	m.Advance(time.Second)
	if at, ok := received(tk.C()); !ok || !at.Equal(start.Add(10*time.Second)) {
		t.Fatalf("at 10s: received %v %v, want a tick at 10s", at, ok)
	}
	// Three periods at once: one tick (the receiver was slow), and the
	// ticker keeps its phase.
	m.Advance(35 * time.Second)
	if at, ok := received(tk.C()); !ok || !at.Equal(start.Add(20*time.Second)) {
		t.Fatalf("at 45s: received %v %v, want the 20s tick", at, ok)
	}
	if _, ok := received(tk.C()); ok {
		t.Fatal("more than one tick kept for a slow receiver")
	}
	m.Advance(5 * time.Second)
	if at, ok := received(tk.C()); !ok || !at.Equal(start.Add(50*time.Second)) {
		t.Fatalf("at 50s: received %v %v, want the 50s tick", at, ok)
	}
	tk.Reset(time.Second)
	m.Advance(time.Second)
	if _, ok := received(tk.C()); !ok {
		t.Fatal("no tick one new period after Reset")
	}
	m.Advance(time.Second) // a tick nobody receives before Stop
	tk.Stop()
	m.Advance(time.Hour)
	if _, ok := received(tk.C()); ok {
		t.Fatal("a stopped ticker ticked")
	}
	if m.Timers() != 0 {
		t.Fatalf("%d timers pending after Stop", m.Timers())
	}
}

func TestManualAfterFunc(t *testing.T) {
	m := NewManual(time.Unix(0, 0))
	var order []string
	m.AfterFunc(2*time.Second, func() { order = append(order, "2s") })
	tm := m.AfterFunc(time.Second, func() {
		order = append(order, "1s")
		// The clock may be used from f: it moved before f runs.
		if got := Since(m, time.Unix(0, 0)); got != 3*time.Second {
			t.Errorf("in f: clock at %v, want 3s", got)
		}
	})
	if tm.C() != nil {
		t.Fatal("an AfterFunc timer has a channel")
	}
	stopped := m.AfterFunc(time.Second, func() { t.Error("a stopped AfterFunc ran") })
	if !stopped.Stop() {
		t.Fatal("Stop of a pending AfterFunc reported it idle")
	}
	m.Advance(3 * time.Second)
	if len(order) != 2 || order[0] != "1s" || order[1] != "2s" {
		t.Fatalf("ran %v, want [1s 2s] before Advance returned", order)
	}
	done := make(chan struct{})
	m.AfterFunc(0, func() { close(done) })
	<-done
}

func TestRealTickerAndAfterFunc(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := Real()
		start := c.Now()
		tk := c.NewTicker(time.Second)
		defer tk.Stop()
		<-tk.C()
		<-tk.C()
		if got := Since(c, start); got != 2*time.Second {
			t.Fatalf("two ticks took %v, want 2s", got)
		}
		fired := make(chan time.Duration, 1)
		c.AfterFunc(time.Minute, func() { fired <- Since(c, start) })
		if got := <-fired; got != time.Minute+2*time.Second {
			t.Fatalf("AfterFunc ran at %v", got)
		}
		tm := c.NewTimer(time.Hour)
		if !tm.Reset(time.Second) {
			t.Fatal("Reset of a pending real timer reported it idle")
		}
		<-tm.C()
		if got := Since(c, start); got != time.Minute+3*time.Second {
			t.Fatalf("reset timer fired at %v", got)
		}
	})
}

// TestRealAllocatesNothing: reading the clock through the interface, and
// resetting a timer, cost no allocation (the spout executor does both on
// its hot path).
func TestRealAllocatesNothing(t *testing.T) {
	c := Real()
	tm := c.NewTimer(time.Hour)
	defer tm.Stop()
	if n := testing.AllocsPerRun(100, func() {
		_ = c.Now()
		tm.Reset(time.Hour)
		_ = tm.C()
	}); n != 0 {
		t.Fatalf("%v allocations per Now and Reset", n)
	}
}

func TestSleepEndsWithItsTimerOrItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if err := Sleep(context.Background(), Real(), time.Minute); err != nil || time.Since(start) != time.Minute {
			t.Fatalf("Sleep(1m) = %v after %v", err, time.Since(start))
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start = time.Now()
		if err := Sleep(ctx, Real(), time.Hour); err != context.DeadlineExceeded || time.Since(start) != time.Second {
			t.Fatalf("Sleep(1h) under a 1s deadline = %v after %v", err, time.Since(start))
		}
		if err := Sleep(ctx, Real(), 0); err != context.DeadlineExceeded {
			t.Fatalf("Sleep(0) on a done context = %v", err)
		}
		if err := Sleep(context.Background(), Real(), -time.Second); err != nil {
			t.Fatalf("Sleep(-1s) = %v", err)
		}
	})
}
