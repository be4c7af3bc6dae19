// Package sim makes injected faults reproducible. A Plan decides whether a
// call fails from the run's seed and the identity of the call alone (where
// it happens, for which txid, attempt, partition or keys, and how many
// times that same call was made before), never from the order in which
// concurrent goroutines happen to ask. A fault test that draws from one
// shared random source hands out its draws in scheduling order, so a
// failing seed may not fail again; one that asks a Plan does.
//
// The package is pure: no clock, no goroutine. Calls counts repeated calls
// and is safe for concurrent use.
package sim

import "sync"

// Plan decides the faults of one run.
type Plan struct {
	seed uint64
}

// NewPlan returns the plan of the run numbered seed: two plans with one
// seed decide alike, in this process and in any other.
func NewPlan(seed uint64) Plan {
	return Plan{seed: mix(seed + golden)}
}

// Chance reports whether the call identified by site and ids fails, with
// probability p.
func (p Plan) Chance(prob float64, site string, ids ...uint64) bool {
	return float64(p.draw(site, ids)>>11)/(1<<53) < prob
}

// IntN returns a number in [0, n), n > 0, decided by site and ids.
func (p Plan) IntN(n int, site string, ids ...uint64) int {
	return int(p.draw(site, ids) % uint64(n))
}

// draw hashes the call's identity under the plan's seed and mixes the
// result, so that neighbouring ids give unrelated draws.
func (p Plan) draw(site string, ids []uint64) uint64 {
	z := mix(p.seed ^ String(site))
	for _, id := range ids {
		z = mix(z + golden ^ id)
	}
	return z
}

// String hashes s (FNV-1a, 64 bits) into an id for Chance and IntN.
func String(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// Calls numbers repeated calls: Next returns 0 the first time it is asked
// about an identity, 1 the second time, and so on. A fault keyed by the
// ordinal of the call as well as by what it does can fire on a retry of a
// call that succeeded before, and the other way round, and still be the
// same in every run.
type Calls struct {
	mu sync.Mutex
	n  map[string]uint64
}

// Next returns how many times key was passed to Next before.
func (c *Calls) Next(key string) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]uint64{}
	}
	n := c.n[key]
	c.n[key] = n + 1
	return n
}

// golden is 2^64 divided by the golden ratio, splitmix64's increment.
const golden = 0x9e3779b97f4a7c15

// mix is splitmix64's finaliser.
func mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
