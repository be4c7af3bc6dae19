package topology

import (
	"math/rand/v2"
	"testing"
)

// TestPendingTableMatchesAMap runs random adds, takes and sweeps against a
// Go map, through growth, shrinking and emptying.
func TestPendingTableMatchesAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var p pendingTable
	model := map[RootID]int64{}
	var roots []RootID
	check := func(step int) {
		t.Helper()
		if p.len() != len(model) {
			t.Fatalf("step %d: len %d; model has %d", step, p.len(), len(model))
		}
	}
	for step := range 200_000 {
		target := 3000 // grow to about this many, then shrink to none
		if (step/20_000)%2 == 1 {
			target = 0
		}
		switch op := rng.IntN(10); {
		case op < 5 && len(model) < target+200 || len(model) == 0:
			r := RootID(rng.Uint64() | 1)
			if _, dup := model[r]; dup {
				continue
			}
			p.add(pendingTree{root: r, msgID: int64(step), emitted: int64(step)})
			model[r] = int64(step)
			roots = append(roots, r)
		case op < 9:
			i := rng.IntN(len(roots))
			r := roots[i]
			got, ok := p.take(r)
			want, inModel := model[r]
			if ok != inModel || ok && (got.root != r || got.msgID != want || got.emitted != want) {
				t.Fatalf("step %d: take(%x) = %+v, %v; model has %v, %v", step, r, got, ok, want, inModel)
			}
			delete(model, r)
			roots[i] = roots[len(roots)-1]
			roots = roots[:len(roots)-1]
		default:
			cut := int64(step - rng.IntN(5000))
			var dropped int
			p.removeIf(func(pt *pendingTree) bool { return pt.emitted < cut }, func(pt pendingTree) {
				if model[pt.root] != pt.emitted {
					t.Fatalf("step %d: dropped %+v, which the model does not hold", step, pt)
				}
				dropped++
			})
			for r, e := range model {
				if e < cut {
					delete(model, r)
					dropped--
				}
			}
			if dropped != 0 {
				t.Fatalf("step %d: removeIf dropped %d trees more than the model", step, dropped)
			}
			roots = roots[:0]
			for r := range model {
				roots = append(roots, r)
			}
		}
		check(step)
		if step%997 == 0 {
			for r, e := range model {
				if !p.has(r) {
					t.Fatalf("step %d: %x (emitted %d) lost", step, r, e)
				}
			}
		}
	}
}

// TestPendingTableShrinks: the table gives its memory back as trees
// complete, in any order, and finds every tree through the shrinking.
func TestPendingTableShrinks(t *testing.T) {
	var p pendingTable
	const n = 200_000
	for r := range RootID(n) {
		p.add(pendingTree{root: r + 1, msgID: r + 1})
	}
	order := rand.New(rand.NewPCG(3, 4)).Perm(n)
	for k, i := range order {
		r := RootID(i + 1)
		got, ok := p.take(r)
		if !ok || got.root != r || got.msgID != r {
			t.Fatalf("take %d (after %d): %+v, %v", r, k, got, ok)
		}
		if left := n - k - 1; left == 1000 {
			if len(p.index) > keptIndex || cap(p.trees) > keptIndex {
				t.Fatalf("1,000 trees left use an index of %d and %d entries", len(p.index), cap(p.trees))
			}
			for _, j := range order[k+1:] {
				if !p.has(RootID(j + 1)) {
					t.Fatalf("tree %d lost while shrinking", j+1)
				}
			}
		}
	}
	if len(p.index) > keptIndex || len(p.trees) != 0 || len(p.free) != 0 || p.len() != 0 {
		t.Fatalf("an empty table keeps %d index slots and %d entries (%d free)", len(p.index), len(p.trees), len(p.free))
	}
}

// TestPendingTableBytesPerTree: the table's point is its size.
func TestPendingTableBytesPerTree(t *testing.T) {
	var p pendingTable
	const n = 1_000_000
	for r := range RootID(n) {
		p.add(pendingTree{root: r*0x9E3779B97F4A7C15 | 1})
	}
	bytes := cap(p.trees)*32 + len(p.index)*4 + cap(p.free)*4
	if per := float64(bytes) / n; per > 50 {
		t.Fatalf("%.1f bytes per pending tree; want at most 50 (a Go map takes 117 at this size)", per)
	}
}
