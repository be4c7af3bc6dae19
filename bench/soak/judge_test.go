package main

import (
	"errors"
	"io"
	"testing"
)

// samplesOf builds interval samples from anonymous and file-backed
// resident sets (MiB) and goroutine counts.
func samplesOf(anon, file func(i int) int64, goroutines func(i int) int) []sample {
	out := make([]sample, 30)
	for i := range out {
		a, f := anon(i)<<20, file(i)<<20
		out[i] = sample{status: procStatus{vmRSS: a + f, rssAnon: a, rssFile: f}, runtime: runtimeSample{goroutines: goroutines(i)}}
	}
	return out
}

func TestJudge(t *testing.T) {
	flat := func(v int64) func(int) int64 { return func(int) int64 { return v } }
	rising := func(i int) int64 { return 60 + 4*int64(i) }
	goroutines := func(int) int { return 37 }
	cases := []struct {
		name    string
		samples []sample
		events  int
		grows   bool
	}{
		{"all flat", samplesOf(flat(60), flat(40), goroutines), 0, false},
		{"the anonymous resident set grows", samplesOf(rising, flat(40), goroutines), 0, true},
		{"goroutines leak", samplesOf(flat(60), flat(40), func(i int) int { return 37 + 2*i }), 0, true},
		{"only the store's mapped file grows: reported, not judged", samplesOf(flat(60), rising, goroutines), 0, false},
		{"with -events growth is reported, not judged", samplesOf(rising, flat(40), goroutines), 5_000_000, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var cfg config
			cfg.register(newFlagSet())
			cfg.events = c.events
			s := &soak{cfg: &cfg, out: io.Discard, samples: c.samples}
			err := s.judge()
			if got := errors.Is(err, errGrowth); got != c.grows {
				t.Fatalf("judge() = %v, want growth %v", err, c.grows)
			}
		})
	}
}

func TestJudgeNeedsSamplesOfADurationRun(t *testing.T) {
	var cfg config
	cfg.register(newFlagSet())
	s := &soak{cfg: &cfg, out: io.Discard, samples: make([]sample, 3)}
	if err := s.judge(); !errors.Is(err, errTooFewSamples) {
		t.Fatalf("judge() of 3 samples = %v, want errTooFewSamples", err)
	}
}
