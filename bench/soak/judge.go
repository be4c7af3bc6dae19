package main

import (
	"errors"
	"fmt"
)

// judge decides growth of the anonymous resident set (the process's
// own memory: heap, stacks, runtime) and of the goroutines over the
// interval samples. The whole resident set is judged too but only
// reported: its file-backed part is the embedded store's file mapped in
// memory, which grows with the data on disk and which the kernel can
// drop at will. With -events nothing fails: the feed runs as fast as it
// can between pauses, so the interval samples fall on batches of every
// size, and the samples at the marks are the figures.
func (s *soak) judge() error {
	s.mu.Lock()
	samples := s.samples
	s.mu.Unlock()
	anon := make([]float64, len(samples))
	rss := make([]float64, len(samples))
	gor := make([]float64, len(samples))
	for i, smp := range samples {
		anon[i] = float64(smp.status.rssAnon)
		rss[i] = float64(smp.status.vmRSS)
		gor[i] = float64(smp.runtime.goroutines)
	}
	rssTol := tolerance{rel: s.cfg.rssTol.rel, abs: s.cfg.rssTol.abs * (1 << 20)}
	var errs []error
	for _, j := range []struct {
		name   string
		series []float64
		tol    tolerance
		unit   float64
		judged bool
	}{
		{"anonymous resident set (MiB)", anon, rssTol, 1 << 20, s.cfg.events == 0},
		{"goroutines", gor, s.cfg.goroutineTol, 1, s.cfg.events == 0},
		{"whole resident set, the store's mapped file included (MiB)", rss, rssTol, 1 << 20, false},
	} {
		v, err := decide(j.series, j.tol)
		if err != nil {
			if j.judged {
				errs = append(errs, fmt.Errorf("%s: %w", j.name, err))
			}
			fmt.Fprintf(s.out, "soak: %s: not judged: %v\n", j.name, err)
			continue
		}
		v.firstPeak, v.middlePeak, v.lastPeak, v.lastLow, v.limit = v.firstPeak/j.unit, v.middlePeak/j.unit, v.lastPeak/j.unit, v.lastLow/j.unit, v.limit/j.unit
		note := ""
		if !j.judged {
			note = " (reported, not judged)"
		}
		fmt.Fprintf(s.out, "soak: %s over %d samples%s: %v\n", j.name, len(j.series), note, v)
		if v.grows && j.judged {
			errs = append(errs, fmt.Errorf("%w: %s", errGrowth, j.name))
		}
	}
	return errors.Join(errs...)
}
