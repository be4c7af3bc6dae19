package main

import (
	"errors"
	"math/rand/v2"
	"testing"
)

// series builds n samples from f(i).
func series(n int, f func(i int) float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

// noisy adds seeded noise of up to ±amp to base.
func noisy(n int, base, amp float64, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	return series(n, func(int) float64 { return base + amp*(2*rng.Float64()-1) })
}

func TestDecide(t *testing.T) {
	const mib = 1 << 20
	rss := tolerance{rel: 0.10, abs: 8 * mib}
	gor := tolerance{rel: 0.10, abs: 10}
	cases := []struct {
		name    string
		samples []float64
		tol     tolerance
		grows   bool
	}{
		{"flat", series(30, func(int) float64 { return 120 * mib }), rss, false},
		{"noisy flat (GC saw-tooth, ±15 %)", noisy(30, 120*mib, 18*mib, 1), rss, false},
		{"noisy flat, another seed", noisy(30, 120*mib, 18*mib, 2), rss, false},
		{"noisy flat goroutines", noisy(30, 150, 12, 3), gor, false},
		{"linear growth, 100 to 200 MiB", series(30, func(i int) float64 { return (100 + float64(i)*100/29) * mib }), rss, true},
		{"linear growth with noise", series(30, func(i int) float64 {
			return (100+float64(i)*4)*mib + float64(i%3-1)*5*mib
		}), rss, true},
		{"a goroutine leaked each minute", series(30, func(i int) float64 { return 150 + 3*float64(i) }), gor, true},
		{"step in the warm-up, then flat (caches filled)", series(30, func(i int) float64 {
			if i < 6 {
				return 60 * mib
			}
			return 140 * mib
		}), rss, false},
		{"step in the middle third, then flat", series(30, func(i int) float64 {
			if i < 14 {
				return 80 * mib
			}
			return 140 * mib
		}), rss, false},
		{"step in the last third", series(30, func(i int) float64 {
			if i < 25 {
				return 100 * mib
			}
			return 160 * mib
		}), rss, true},
		{"one spike in the last third is judged by its size", series(12, func(i int) float64 {
			if i == 10 {
				return 300 * mib
			}
			return 100 * mib
		}), rss, true},
		{"a warm-up spike does not hide growth after it", series(30, func(i int) float64 {
			if i == 2 {
				return 300 * mib
			}
			return (100 + float64(i)*100/29) * mib
		}), rss, true},
		{"shrinking", series(30, func(i int) float64 { return (200 - float64(i)) * mib }), rss, false},
		{"a rise within the tolerance that comes back down", []float64{100, 100, 100, 104, 100, 103, 110, 101, 100}, tolerance{abs: 20}, false},
		{"a slow steady rise, well within the tolerance", series(30, func(i int) float64 { return 100 + float64(i) }), tolerance{abs: 20}, true},
		{"a slow steady rise over too few samples to tell it from noise", series(12, func(i int) float64 { return 100 + float64(i) }), tolerance{abs: 20}, false},
		{"six noisy goroutine samples whose last two sit above the middle two", []float64{33, 24, 31, 31, 33, 32}, gor, false},
		{"step in the middle third, then noisy flat", series(30, func(i int) float64 {
			if i < 14 {
				return 80 * mib
			}
			return float64(140+(i*7)%5-2) * mib
		}), rss, false},
		{"the shortest series judged", []float64{1, 1, 1, 1, 5, 5}, tolerance{}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := decide(c.samples, c.tol)
			if err != nil {
				t.Fatal(err)
			}
			if v.grows != c.grows {
				t.Fatalf("grows = %v, want %v (%v)", v.grows, c.grows, v)
			}
		})
	}
}

func TestDecideRefusesTooFewSamplesAndNegativeTolerance(t *testing.T) {
	if _, err := decide([]float64{1, 2, 3, 4, 5}, tolerance{}); !errors.Is(err, errTooFewSamples) {
		t.Fatalf("5 samples: err = %v, want errTooFewSamples", err)
	}
	if _, err := decide(series(9, func(int) float64 { return 1 }), tolerance{rel: -0.1}); err == nil {
		t.Fatal("a negative tolerance was accepted")
	}
}

func TestDecideReportsThePeaks(t *testing.T) {
	v, err := decide([]float64{9, 1, 2, 3, 4, 5}, tolerance{rel: 0.5, abs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if v.firstPeak != 9 || v.middlePeak != 3 || v.lastPeak != 5 || v.lastLow != 4 || v.limit != 5.5 || v.grows || v.steady {
		t.Fatalf("verdict %+v, want peaks 9, 3, 5, low 4, limit 5.5, not growing (too short for the second rule)", v)
	}
}
