package coord

import "math/rand/v2"

// Backoff computes retry delays in any unit (ticks here, nanoseconds in a
// shell): Base after the first failure, doubled after every further one up
// to Max, each delay jittered down by at most half from a seeded PCG, so
// that many streams failing together do not retry in lockstep and a run
// can be replayed from its seed. The zero Backoff never waits.
type Backoff struct {
	Base, Max int64
	rnd       *rand.Rand
}

// NewBackoff returns a Backoff from base to max (max below base means
// base) whose jitter is drawn from a PCG seeded with seed.
func NewBackoff(base, max int64, seed uint64) Backoff {
	return Backoff{Base: base, Max: max, rnd: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// Delay returns the delay after failure number n (1 for the first) and
// draws its jitter: a value in [d-d/2, d] for d = min(Max, Base·2^(n-1)).
// It is 0 when Base is 0 or n < 1, and at least 1 otherwise.
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
