// Package hist has Histogram, the one latency histogram of squall: a
// fixed-size log-linear histogram of durations, lock-free to record into
// and summarised by quantiles accurate to about 7%, the exact maximum and
// sum, and exact counts below fixed power-of-two bounds (Bounds), which
// the monitor exports as Prometheus histogram buckets. The tuple runtime keeps
// one per spout component (complete latency) and Trident one per topology
// (batch latency).
//
// The benchmark harness under bench/ keeps its own finer histogram (64
// sub-buckets per power of two, in microseconds) on purpose: it mirrors the
// Java histogram of the Storm side, so both report the same quantiles.
package hist

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// Summary summarises a Histogram.
type Summary struct {
	Count uint64
	P50   time.Duration
	P99   time.Duration
	Max   time.Duration
	Sum   time.Duration // of every duration recorded
	// Below[i] counts the durations below Bounds[i]: exact, since every
	// bound is a power of two, where buckets start.
	Below [len(Bounds)]uint64
}

// Bounds are the upper bounds (exclusive) of Summary.Below: the powers of
// two from 2^13 ns (8.192µs) to 2^36 ns (68.7s).
var Bounds = func() (b [24]time.Duration) {
	for i := range b {
		b[i] = time.Duration(1) << (13 + i)
	}
	return b
}()

// Histogram is a log-linear histogram of durations in nanoseconds with 8
// sub-buckets per power of two, safe for concurrent use.
type Histogram struct {
	buckets [64 * subBuckets]atomic.Uint64
	max     atomic.Int64
	count   atomic.Uint64
	sum     atomic.Int64 // nanoseconds
}

const subBits = 3
const subBuckets = 1 << subBits

func bucketOf(v uint64) int {
	if v < subBuckets {
		return int(v)
	}
	e := bits.Len64(v) - 1
	return (e-subBits+1)*subBuckets + int(v>>(e-subBits))&(subBuckets-1)
}

// bucketMid returns a value in the middle of bucket i.
func bucketMid(i int) uint64 {
	if i < subBuckets {
		return uint64(i)
	}
	e := i/subBuckets + subBits - 1
	low := uint64(subBuckets+i%subBuckets) << (e - subBits)
	return low + (uint64(1)<<(e-subBits))/2
}

// Record adds one duration; a negative one counts as 0.
func (h *Histogram) Record(d time.Duration) {
	if d < 0 {
		d = 0
	}
	h.buckets[bucketOf(uint64(d))].Add(1)
	h.count.Add(1)
	h.sum.Add(int64(d))
	for {
		m := h.max.Load()
		if int64(d) <= m || h.max.CompareAndSwap(m, int64(d)) {
			return
		}
	}
}

// RecordN adds n durations of d each, as n calls of Record would; a
// negative d counts as 0.
func (h *Histogram) RecordN(d time.Duration, n uint64) {
	if n == 0 {
		return
	}
	if d < 0 {
		d = 0
	}
	h.buckets[bucketOf(uint64(d))].Add(n)
	h.count.Add(n)
	h.sum.Add(int64(d) * int64(n))
	for {
		m := h.max.Load()
		if int64(d) <= m || h.max.CompareAndSwap(m, int64(d)) {
			return
		}
	}
}

// Summary returns the count, the median, the 99th percentile, the
// maximum, the sum and the counts below Bounds. Read while durations are
// recorded, the figures may disagree by the durations of the moment.
func (h *Histogram) Summary() Summary {
	n := h.count.Load()
	l := Summary{Count: n, Max: time.Duration(h.max.Load()), Sum: time.Duration(h.sum.Load())}
	if n == 0 {
		return l
	}
	var below uint64
	next := 0
	for i := range h.buckets {
		for next < len(Bounds) && bucketOf(uint64(Bounds[next])) == i {
			l.Below[next] = below
			next++
		}
		below += h.buckets[i].Load()
	}
	l.P50 = h.quantile(n, 0.50)
	l.P99 = h.quantile(n, 0.99)
	return l
}

func (h *Histogram) quantile(n uint64, q float64) time.Duration {
	rank := uint64(q*float64(n-1)) + 1
	var seen uint64
	for i := range h.buckets {
		seen += h.buckets[i].Load()
		if seen >= rank {
			return time.Duration(bucketMid(i))
		}
	}
	return time.Duration(h.max.Load())
}
