package clock

import (
	"slices"
	"sync"
	"time"
)

// Manual is a Clock that stands still until Advance moves it. Timers,
// tickers and AfterFunc calls fire, in deadline order, when an Advance
// reaches their deadline. It is safe for concurrent use.
type Manual struct {
	mu      sync.Mutex
	now     time.Time
	waiters []*waiter // armed timers, tickers and AfterFuncs
}

// NewManual returns a Manual clock reading start.
func NewManual(start time.Time) *Manual { return &Manual{now: start} }

// Now returns the clock's time.
func (m *Manual) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now
}

// NewTimer returns a timer that fires once the clock has advanced by d; a
// timer of d <= 0 fires at once.
func (m *Manual) NewTimer(d time.Duration) Timer {
	w := &waiter{m: m, c: make(chan time.Time, 1)}
	w.Reset(d)
	return w
}

// NewTicker returns a ticker that fires every time the clock passes a
// multiple of d from now. An Advance over several periods sends one tick,
// like a time.Ticker whose receiver is slow. It panics if d <= 0.
func (m *Manual) NewTicker(d time.Duration) Ticker {
	if d <= 0 {
		panic("clock: non-positive interval for NewTicker")
	}
	t := tickerOf{&waiter{m: m, c: make(chan time.Time, 1)}}
	t.Reset(d)
	return t
}

// AfterFunc calls f once the clock has advanced by d. Unlike the time
// package, f runs in the goroutine that calls Advance, after the clock
// moved and before Advance returns, so a test knows it ran; with d <= 0
// it runs in a goroutine of its own at once. f may use the clock.
func (m *Manual) AfterFunc(d time.Duration, f func()) Timer {
	w := &waiter{m: m, f: f}
	w.Reset(d)
	return w
}

// Advance moves the clock forward by d and fires, in deadline order, the
// timers and tickers whose deadline it reached; then it calls the
// AfterFunc functions that came due, in the same order.
func (m *Manual) Advance(d time.Duration) {
	m.mu.Lock()
	m.now = m.now.Add(d)
	var due []*waiter
	kept := m.waiters[:0]
	for _, w := range m.waiters {
		if w.at.After(m.now) {
			kept = append(kept, w)
		} else {
			due = append(due, w)
		}
	}
	clear(m.waiters[len(kept):])
	m.waiters = kept
	slices.SortStableFunc(due, func(a, b *waiter) int { return a.at.Compare(b.at) })
	var funcs []func()
	for _, w := range due {
		switch {
		case w.f != nil:
			funcs = append(funcs, w.f)
		default:
			select {
			case w.c <- w.at:
			default: // a tick nobody received yet: drop this one
			}
		}
		if w.period > 0 {
			n := m.now.Sub(w.at)/w.period + 1
			w.at = w.at.Add(n * w.period)
			m.waiters = append(m.waiters, w)
		}
	}
	m.mu.Unlock()
	for _, f := range funcs {
		f()
	}
}

// Timers returns the number of timers, tickers and AfterFunc calls
// waiting to fire.
func (m *Manual) Timers() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.waiters)
}

// waiter is a Manual timer (c set), ticker (c and period set) or AfterFunc
// (f set).
type waiter struct {
	m      *Manual
	at     time.Time
	period time.Duration
	c      chan time.Time
	f      func()
}

func (w *waiter) C() <-chan time.Time { return w.c }

// Stop disarms w and drains a time it sent but nobody received.
func (w *waiter) Stop() bool {
	w.m.mu.Lock()
	defer w.m.mu.Unlock()
	return w.stopLocked()
}

func (w *waiter) stopLocked() bool {
	if w.c != nil {
		select {
		case <-w.c:
		default:
		}
	}
	i := slices.Index(w.m.waiters, w)
	if i < 0 {
		return false
	}
	w.m.waiters = slices.Delete(w.m.waiters, i, i+1)
	return true
}

// Reset rearms w, a timer or AfterFunc, to fire d from now: at once if
// d <= 0.
func (w *waiter) Reset(d time.Duration) bool {
	w.m.mu.Lock()
	defer w.m.mu.Unlock()
	was := w.stopLocked()
	w.at = w.m.now.Add(d)
	switch {
	case d > 0:
		w.m.waiters = append(w.m.waiters, w)
	case w.f != nil:
		go w.f()
	default:
		w.c <- w.m.now
	}
	return was
}

// tickerOf is the Ticker view of a waiter.
type tickerOf struct{ w *waiter }

func (t tickerOf) C() <-chan time.Time { return t.w.c }
func (t tickerOf) Stop()               { t.w.Stop() }

func (t tickerOf) Reset(d time.Duration) {
	if d <= 0 {
		panic("clock: non-positive interval for Ticker.Reset")
	}
	t.w.m.mu.Lock()
	defer t.w.m.mu.Unlock()
	t.w.stopLocked()
	t.w.period = d
	t.w.at = t.w.m.now.Add(d)
	t.w.m.waiters = append(t.w.m.waiters, t.w)
}
