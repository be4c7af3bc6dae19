// Package clock is the seam through which squall's shells read time: Now,
// and timers, tickers and deferred calls to wait on. Pure cores (the
// acker, the batch coordinator) count logical ticks and never see a clock;
// the goroutines around them take a Clock from their configuration, where
// nil means Real.
//
// Real reads the system clock; inside a testing/synctest bubble that clock
// is already virtual. Manual is a clock that moves only when a test
// advances it, for tests that must decide exactly when time passes.
//
// Calling a Clock through the interface allocates nothing beyond what the
// time package does: Real's values are pointer-shaped, so hot paths may
// read Now through it.
package clock

import (
	"context"
	"time"
)

// Clock tells the time and makes timers.
type Clock interface {
	Now() time.Time
	// NewTimer returns a timer that sends the time on its channel once d
	// has passed.
	NewTimer(d time.Duration) Timer
	// NewTicker returns a ticker that sends the time on its channel every
	// d, dropping ticks a slow receiver misses; d must be positive.
	NewTicker(d time.Duration) Ticker
	// AfterFunc calls f in its own goroutine once d has passed (Manual
	// calls it from Advance); the returned Timer's C is nil.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a one-shot timer of a Clock, with the semantics of time.Timer
// since Go 1.23: after Stop or Reset returns, no stale time is received
// from C.
type Timer interface {
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it did.
	Stop() bool
	// Reset makes the timer fire once d has passed from now; it reports
	// whether the timer was pending.
	Reset(d time.Duration) bool
}

// Ticker is a periodic timer of a Clock, with the semantics of
// time.Ticker.
type Ticker interface {
	C() <-chan time.Time
	// Stop turns the ticker off; no tick is received from C afterwards.
	Stop()
	// Reset stops the ticker and makes it tick every d from now.
	Reset(d time.Duration)
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

func (realClock) NewTicker(d time.Duration) Ticker { return realTicker{time.NewTicker(d)} }

func (realClock) AfterFunc(d time.Duration, f func()) Timer { return realTimer{time.AfterFunc(d, f)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time        { return r.t.C }
func (r realTimer) Stop() bool                 { return r.t.Stop() }
func (r realTimer) Reset(d time.Duration) bool { return r.t.Reset(d) }

type realTicker struct{ t *time.Ticker }

func (r realTicker) C() <-chan time.Time   { return r.t.C }
func (r realTicker) Stop()                 { r.t.Stop() }
func (r realTicker) Reset(d time.Duration) { r.t.Reset(d) }

// Sleep waits d on c, or until ctx is done: it returns ctx's error if ctx
// ended first (or d is not positive and ctx is already done), else nil.
func Sleep(ctx context.Context, c Clock, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
