package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/squallstream/squall/internal/nemesis"
)

// report prints one schedule's outcome, and where its logs stay when it
// failed.
func (h *harness) report(r result) {
	var heals []string
	for _, e := range r.Episodes {
		detect := "undetected"
		if e.Signal != "" {
			detect = fmt.Sprintf("detected %v by %s", e.ToDetect.Round(100*time.Millisecond), e.Signal)
		}
		if e.Live {
			heals = append(heals, fmt.Sprintf("%s %v (%s)", kindsLabel(e.Kinds), e.ToCommit.Round(100*time.Millisecond), detect))
		} else {
			heals = append(heals, fmt.Sprintf("%s NONE (%s)", kindsLabel(e.Kinds), detect))
		}
	}
	status := "ok"
	if r.failed() {
		status = "FAILED, logs kept in " + r.Dir
	}
	h.say("seed %d: %d mismatches, %d split brains, %d liveness failures; heal -> first commit: %s; %v; %s",
		r.Seed, r.Mismatches, len(r.SplitBrains), r.Liveness, strings.Join(heals, ", "), r.Took, status)
	for _, s := range r.SplitBrains {
		h.say("seed %d: split brain: %s", r.Seed, s)
	}
	if r.Err != "" {
		h.say("seed %d: error: %s", r.Seed, r.Err)
	}
	if r.failed() {
		h.say("seed %d: rerun it alone with PARTITION_SEED=%d PARTITION_SCHEDULES=1 make partitions", r.Seed, r.Seed)
	}
}

func kindsLabel(ks []nemesis.Kind) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, "+")
}

// kindFigures are the heal → first commit times of one fault kind, and
// its fault → detection times.
type kindFigures struct {
	Kind         nemesis.Kind
	N, Failures  int
	Median, Max  time.Duration
	Observations []time.Duration
	// Detected counts the episodes in which the cluster reacted while
	// the faults held; Undetected the others.
	Detected, Undetected    int
	DetectMedian, DetectMax time.Duration
	Detections              []time.Duration
	Signals                 map[string]int // first signals, by name
}

// figuresByKind groups the episodes' times by each kind they held (an
// episode with a second fault of another kind counts for both kinds).
func figuresByKind(results []result) []kindFigures {
	by := map[nemesis.Kind]*kindFigures{}
	for _, r := range results {
		for _, e := range r.Episodes {
			for i, k := range e.Kinds {
				if slices.Contains(e.Kinds[:i], k) {
					continue // a kill during a kill counts once
				}
				f := by[k]
				if f == nil {
					f = &kindFigures{Kind: k}
					by[k] = f
				}
				if e.Live {
					f.Observations = append(f.Observations, e.ToCommit)
				} else {
					f.Failures++
				}
				if e.Signal == "" {
					f.Undetected++
					continue
				}
				f.Detections = append(f.Detections, e.ToDetect)
				if f.Signals == nil {
					f.Signals = map[string]int{}
				}
				f.Signals[e.Signal]++
			}
		}
	}
	var out []kindFigures
	for _, k := range nemesis.Kinds() {
		f := by[k]
		if f == nil {
			continue
		}
		f.N = len(f.Observations)
		f.Median, f.Max = medianMax(f.Observations)
		f.Detected = len(f.Detections)
		f.DetectMedian, f.DetectMax = medianMax(f.Detections)
		out = append(out, *f)
	}
	return out
}

// medianMax sorts ds and returns their median and maximum (zero when
// there are none).
func medianMax(ds []time.Duration) (median, maximum time.Duration) {
	slices.Sort(ds)
	n := len(ds)
	if n == 0 {
		return 0, 0
	}
	if n%2 == 1 {
		return ds[n/2], ds[n-1]
	}
	return (ds[n/2-1] + ds[n/2]) / 2, ds[n-1]
}

// figures prints per fault kind heal → first commit (episodes, median,
// max, heals without a commit within the bound) and fault → detection
// (episodes detected while the faults held, median, max, undetected,
// and the first signals).
func (h *harness) figures(results []result) {
	fs := figuresByKind(results)
	if len(fs) == 0 {
		return
	}
	h.say("by fault kind: heal -> first commit (episodes, median, max, no commit within %v) | fault -> detection (detected, median, max, undetected; first signals):", h.cfg.bound)
	r := func(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }
	for _, f := range fs {
		h.say("  %-15s %3d  %8v  %8v  %d | %3d  %8v  %8v  %d  %s", f.Kind, f.N, r(f.Median), r(f.Max), f.Failures,
			f.Detected, r(f.DetectMedian), r(f.DetectMax), f.Undetected, signalCounts(f.Signals))
	}
}

// signalCounts formats counts of signals by name, in name order.
func signalCounts(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s×%d", k, m[k]))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}
