// Package clock is the seam through which squall's shells read time: Now,
// and timers to wait on. Pure cores (the acker, the batch coordinator)
// count logical ticks and never see a clock; the goroutines around them
// take a Clock from their configuration, where nil means Real.
//
// Real reads the system clock; inside a testing/synctest bubble that clock
// is already virtual. Manual is a clock that moves only when a test
// advances it, for tests that must decide exactly when time passes.
package clock

import "time"

// Clock tells the time and makes timers.
type Clock interface {
	Now() time.Time
	// NewTimer returns a timer that sends the time on its channel once d
	// has passed.
	NewTimer(d time.Duration) Timer
}

// Timer is a one-shot timer of a Clock.
type Timer interface {
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it did.
	Stop() bool
}

// Real returns the system clock.
func Real() Clock { return realClock{} }

// Or returns c, or Real if c is nil: the default of every Clock field.
func Or(c Clock) Clock {
	if c == nil {
		return Real()
	}
	return c
}

// Since returns the time elapsed on c since t.
func Since(c Clock, t time.Time) time.Duration { return c.Now().Sub(t) }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time { return r.t.C }
func (r realTimer) Stop() bool          { return r.t.Stop() }
