package simulation

import (
	"flag"
	"fmt"
	"testing"
)

var seeds = flag.Int("simulation.seeds", 300, "seeds per flavour of TestSimulation")

// TestSimulation runs the batch protocol under random message orders,
// losses, failures and crashes; every seed must count every record exactly
// once. A failing seed fails the same way every time: rerun it with
// -run 'TestSimulation/<flavour>/seed=<n>'.
func TestSimulation(t *testing.T) {
	for _, fl := range []Flavour{Opaque, Transactional} {
		for seed := uint64(1); seed <= uint64(*seeds); seed++ {
			t.Run(fmt.Sprintf("%s/seed=%d", fl, seed), func(t *testing.T) {
				t.Parallel()
				res, err := Run(Options{Seed: seed, Flavour: fl})
				if err != nil {
					t.Fatal(err)
				}
				if res.Committed == 0 || res.Delivered == 0 {
					t.Fatalf("nothing happened: %+v", res.Stats)
				}
			})
		}
	}
}

// TestSimulationFaultsHappen checks that the runs are not trivially easy:
// across the seeds, every kind of fault occurs.
func TestSimulationFaultsHappen(t *testing.T) {
	var total Stats
	for seed := uint64(1); seed <= 40; seed++ {
		res, err := Run(Options{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		total.Crashes += res.Crashes
		total.Lost += res.Lost
		total.Faults += res.Faults
		total.FailedTrees += res.FailedTrees
		total.Attempts += res.Attempts
		total.Mismatches += res.Mismatches
	}
	t.Logf("40 seeds: %+v", total)
	if total.Crashes == 0 || total.Lost == 0 || total.Faults == 0 || total.FailedTrees == 0 || total.Mismatches == 0 {
		t.Fatalf("a kind of fault never happened in 40 seeds: %+v", total)
	}
}

// TestSimulationIsDeterministic runs seeds twice: every event must repeat.
func TestSimulationIsDeterministic(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		for _, fl := range []Flavour{Opaque, Transactional} {
			a, errA := Run(Options{Seed: seed, Flavour: fl})
			b, errB := Run(Options{Seed: seed, Flavour: fl})
			if errA != nil || errB != nil {
				t.Fatal(errA, errB)
			}
			if a.Trace != b.Trace || a.Stats != b.Stats {
				t.Fatalf("seed %d (%s) ran differently twice: %+v then %+v", seed, fl, a.Stats, b.Stats)
			}
		}
	}
}

// TestSimulationCatchesAMissingFreeze breaks the runtime on purpose: a
// commit that starts before the batch's metadata is frozen lets a replay
// of an opaque batch read other records than the partial write it redoes.
// The simulation must catch it, and catch it again when the seed reruns.
func TestSimulationCatchesAMissingFreeze(t *testing.T) {
	caught := 0
	for seed := uint64(1); seed <= 30; seed++ {
		opt := Options{Seed: seed, SkipFreeze: true, MaxSteps: 20000}
		_, err := Run(opt)
		if err == nil {
			continue
		}
		caught++
		if _, again := Run(opt); again == nil || again.Error() != err.Error() {
			t.Fatalf("seed %d failed once and then not the same way:\n%v\nthen\n%v", seed, err, again)
		}
	}
	t.Logf("a missing freeze is caught on %d of 30 seeds", caught)
	if caught == 0 {
		t.Fatal("30 seeds ran without freezing batches before commits, and none failed")
	}
}
