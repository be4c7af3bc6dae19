package sim

import (
	"math"
	"sync"
	"testing"
)

func TestPlanDecidesByIdentityAlone(t *testing.T) {
	a, b := NewPlan(7), NewPlan(7)
	for id := range uint64(1000) {
		if a.Chance(0.3, "put", id, 2) != b.Chance(0.3, "put", id, 2) {
			t.Fatalf("two plans of seed 7 disagree on call %d", id)
		}
	}
	// Asking in another order, or asking other things in between, changes
	// nothing.
	first := make([]bool, 100)
	for id := range first {
		first[id] = a.Chance(0.5, "get", uint64(id))
	}
	for id := len(first) - 1; id >= 0; id-- {
		a.Chance(0.5, "other", uint64(id))
		if a.Chance(0.5, "get", uint64(id)) != first[id] {
			t.Fatalf("call %d decided differently when asked again", id)
		}
	}
}

func TestPlanSeedsSitesAndIdsDiffer(t *testing.T) {
	differ := func(name string, f func(id uint64) (bool, bool)) {
		t.Helper()
		same := 0
		for id := range uint64(1000) {
			x, y := f(id)
			if x == y {
				same++
			}
		}
		// Independent fair coins agree about half the time.
		if same < 400 || same > 600 {
			t.Errorf("%s: %d of 1000 decisions agree, want about 500", name, same)
		}
	}
	p, q := NewPlan(1), NewPlan(2)
	differ("seeds", func(id uint64) (bool, bool) { return p.Chance(0.5, "s", id), q.Chance(0.5, "s", id) })
	differ("sites", func(id uint64) (bool, bool) { return p.Chance(0.5, "s", id), p.Chance(0.5, "t", id) })
	differ("neighbouring ids", func(id uint64) (bool, bool) { return p.Chance(0.5, "s", id), p.Chance(0.5, "s", id+1) })
	differ("id order", func(id uint64) (bool, bool) { return p.Chance(0.5, "s", id, 1), p.Chance(0.5, "s", 1, id) })
}

func TestChanceFollowsProbability(t *testing.T) {
	p := NewPlan(3)
	for _, prob := range []float64{0, 0.03, 0.5, 1} {
		hits := 0
		const n = 20000
		for id := range uint64(n) {
			if p.Chance(prob, "c", id) {
				hits++
			}
		}
		if got := float64(hits) / n; math.Abs(got-prob) > 0.01 {
			t.Errorf("Chance(%v) fired %.4f of the time", prob, got)
		}
	}
}

func TestIntNIsInRangeAndSpread(t *testing.T) {
	p := NewPlan(4)
	var seen [6]int
	for id := range uint64(6000) {
		n := p.IntN(6, "i", id)
		if n < 0 || n >= 6 {
			t.Fatalf("IntN(6) = %d", n)
		}
		seen[n]++
	}
	for v, c := range seen {
		if c < 800 || c > 1200 {
			t.Errorf("IntN(6) gave %d %d times of 6000", v, c)
		}
	}
}

func TestCallsNumberEachIdentity(t *testing.T) {
	var c Calls
	var wg sync.WaitGroup
	got := make([][]uint64, 4)
	for g := range got {
		wg.Go(func() {
			for range 100 {
				got[g] = append(got[g], c.Next("k"))
			}
		})
	}
	wg.Wait()
	seen := map[uint64]bool{}
	for _, ns := range got {
		for _, n := range ns {
			if seen[n] {
				t.Fatalf("ordinal %d handed out twice", n)
			}
			seen[n] = true
		}
	}
	if len(seen) != 400 || c.Next("k") != 400 || c.Next("other") != 0 {
		t.Fatalf("ordinals: %d distinct, want 0..399 for k and 0 for a new key", len(seen))
	}
}
