package clock

import (
	"testing"
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
