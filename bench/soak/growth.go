package main

import (
	"errors"
	"fmt"
	"slices"
)

// minSamples is the fewest samples decide judges: two per third.
const minSamples = 6

// minSteadyThird is the fewest samples the middle and the last third
// must each hold for the second rule (a last third wholly above the
// middle third's peak). With fewer, noise alone satisfies it too often:
// for samples that are noise around a flat level, the chance is one in
// C(2k, k) with k samples a third (1 in 6 at 2, 1 in 70 at 4, 1 in
// 12,870 at 8).
const minSteadyThird = 8

// errTooFewSamples is returned by decide for a series too short to judge.
var errTooFewSamples = errors.New("soak: too few samples to judge growth")

// tolerance is how far the last third's peak may rise above the middle
// third's peak before the series counts as growing: limit = middle peak ×
// (1 + rel) + abs. The zero value tolerates nothing.
type tolerance struct {
	rel float64 // a share of the middle third's peak, e.g. 0.10
	abs float64 // in the series' unit, e.g. bytes or goroutines
}

// validate rejects a negative tolerance.
func (t tolerance) validate() error {
	if t.rel < 0 || t.abs < 0 {
		return fmt.Errorf("soak: tolerance %+v: must not be negative", t)
	}
	return nil
}

// verdict is decide's judgement of one series.
type verdict struct {
	grows      bool
	middlePeak float64 // the middle third's peak
	lastPeak   float64 // the last third's peak
	lastLow    float64 // the last third's lowest sample
	limit      float64 // what lastPeak may reach
	steady     bool    // whether the thirds were long enough for the second rule
	firstPeak  float64 // the first third's peak (warm-up), for the report
}

func (v verdict) String() string {
	word := "flat"
	if v.grows {
		word = "GROWS"
	}
	return fmt.Sprintf("%s: peak %.1f in the first third, %.1f in the middle, %.1f in the last (limit %.1f; lowest in the last %.1f)",
		word, v.firstPeak, v.middlePeak, v.lastPeak, v.limit, v.lastLow)
}

// decide judges whether a series of samples, taken at a steady interval,
// grows without bound. It cuts the series into thirds and ignores the
// first (the warm-up: caches filling, the heap finding its size). The
// series grows when the last third's peak is above the middle third's
// peak by more than tol, or when the whole last third stays above the
// middle third's peak (a rise that never comes back down, however slow;
// only with at least minSteadyThird samples in each of the two thirds).
// Peaks, not means, so that a garbage collector's saw-tooth or a burst in
// one sample does not decide alone; a step that ends before the last
// third (a cache filling up) passes, a rise that goes on into the last
// third fails: a fast one by the first rule, a slow steady one by the
// second. Noise hides a slow rise smaller than the noise from the second
// rule; the first catches it once it reaches about three times tol over
// the run.
func decide(samples []float64, tol tolerance) (verdict, error) {
	if err := tol.validate(); err != nil {
		return verdict{}, err
	}
	n := len(samples)
	if n < minSamples {
		return verdict{}, fmt.Errorf("%w: %d, want at least %d", errTooFewSamples, n, minSamples)
	}
	a, b := n/3, 2*n/3
	v := verdict{
		firstPeak:  slices.Max(samples[:a]),
		middlePeak: slices.Max(samples[a:b]),
		lastPeak:   slices.Max(samples[b:]),
	}
	v.lastLow = slices.Min(samples[b:])
	v.limit = v.middlePeak*(1+tol.rel) + tol.abs
	v.steady = b-a >= minSteadyThird && n-b >= minSteadyThird
	v.grows = v.lastPeak > v.limit || (v.steady && v.lastLow > v.middlePeak)
	return v, nil
}
