package main

import (
	"fmt"
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
		if e.Live {
			heals = append(heals, fmt.Sprintf("%s %v", kindsLabel(e.Kinds), e.ToCommit.Round(100*time.Millisecond)))
		} else {
			heals = append(heals, fmt.Sprintf("%s NONE", kindsLabel(e.Kinds)))
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

// kindFigures are the heal → first commit times of one fault kind.
type kindFigures struct {
	Kind         nemesis.Kind
	N, Failures  int
	Median, Max  time.Duration
	Observations []time.Duration
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
			}
		}
	}
	var out []kindFigures
	for _, k := range nemesis.Kinds() {
		f := by[k]
		if f == nil {
			continue
		}
		slices.Sort(f.Observations)
		f.N = len(f.Observations)
		if f.N > 0 {
			f.Max = f.Observations[f.N-1]
			if f.N%2 == 1 {
				f.Median = f.Observations[f.N/2]
			} else {
				f.Median = (f.Observations[f.N/2-1] + f.Observations[f.N/2]) / 2
			}
		}
		out = append(out, *f)
	}
	return out
}

// figures prints heal → first commit per fault kind: episodes, median,
// max, heals without a commit within the bound.
func (h *harness) figures(results []result) {
	fs := figuresByKind(results)
	if len(fs) == 0 {
		return
	}
	h.say("heal -> first commit by fault kind (episodes, median, max, no commit within %v):", h.cfg.bound)
	for _, f := range fs {
		h.say("  %-15s %3d  %8v  %8v  %d", f.Kind, f.N, f.Median.Round(100*time.Millisecond), f.Max.Round(100*time.Millisecond), f.Failures)
	}
}
