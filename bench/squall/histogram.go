package main

import (
	"math"
	"math/bits"
	"sync"
)

// histogram is a log-linear histogram of microsecond values: exact below
// 64 µs, then 64 buckets per power of two (quantiles within 1.6%). The Storm
// side (bench/storm LatencyHistogram) uses the same layout, and, like it,
// takes a lock per value.
type histogram struct {
	mu     sync.Mutex
	counts [histSub + 57*histSub]uint64 // e <= 56 for int64 values
	total  uint64
}

const histSub = 64

func histIndex(us int64) int {
	if us < histSub {
		return int(max(us, 0))
	}
	e := bits.Len64(uint64(us)) - 7 // us >> e is in [64, 128)
	return histSub + e*histSub + int(us>>e) - histSub
}

func histLowerBound(i int) int64 {
	if i < histSub {
		return int64(i)
	}
	e := (i - histSub) / histSub
	return int64((i-histSub)%histSub+histSub) << e
}

func (h *histogram) record(us int64) {
	h.mu.Lock()
	h.counts[histIndex(us)]++
	h.total++
	h.mu.Unlock()
}

// quantile returns the q-quantile (0 < q <= 1) in microseconds, 0 with no
// values.
func (h *histogram) quantile(q float64) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.total == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.total)))
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return histLowerBound(i)
		}
	}
	return histLowerBound(len(h.counts) - 1)
}
