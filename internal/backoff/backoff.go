// Package backoff computes exponential retry delays, purely: no clock, no
// goroutine, no sleep. The caller owns the waiting. Every retry loop of
// squall takes its delays from here — batch replays and the trident
// master's retries (in ticks and in nanoseconds), the owner acquisition at
// Submit, the supervisor's worker restarts, the Kafka spout's reconnects —
// so they double, cap and reset the same way.
//
// Jitter is drawn from a seeded PCG, so a run can be replayed from its
// seed; a Backoff made without a seed does not jitter.
package backoff

import "math/rand/v2"

// Backoff computes retry delays in any unit (ticks in a pure core,
// nanoseconds in a shell): Base after the first failure, doubled after
// every further one up to Max. A jittered Backoff draws each delay down by
// at most half, so that many streams failing together do not retry in
// lockstep. The zero Backoff never waits.
type Backoff struct {
	Base, Max int64
	rnd       *rand.Rand // nil: no jitter
}

// New returns a jittered Backoff from base to max (max below base means
// base) whose jitter is drawn from a PCG seeded with seed.
func New(base, max int64, seed uint64) Backoff {
	return Backoff{Base: base, Max: max, rnd: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// Exponential returns a Backoff from base to max without jitter.
func Exponential(base, max int64) Backoff { return Backoff{Base: base, Max: max} }

// Delay returns the delay after failure number n (1 for the first) and,
// if jittered, draws its jitter: a value in [d-d/2, d] for
// d = min(Max, Base·2^(n-1)). It is 0 when Base is 0 or n < 1, and at
// least 1 otherwise.
func (b *Backoff) Delay(n int) int64 {
	if b.Base <= 0 || n < 1 {
		return 0
	}
	d, limit := b.Base, max(b.Max, b.Base)
	for i := 1; i < n && d < limit; i++ {
		if d > limit/2 {
			d = limit
		} else {
			d *= 2
		}
	}
	if b.rnd == nil {
		return d
	}
	return d - b.rnd.Int64N(d/2+1)
}

// Sequence counts consecutive failures over a Backoff: Next after each
// failure, Reset after a success.
type Sequence struct {
	Backoff
	fails int
}

// Next counts a failure and returns the delay before the next try.
func (s *Sequence) Next() int64 {
	s.fails++
	return s.Delay(s.fails)
}

// Reset forgets the failures: the next delay is Base again.
func (s *Sequence) Reset() { s.fails = 0 }

// Failures returns the failures counted since the last Reset.
func (s *Sequence) Failures() int { return s.fails }
