package acker

import (
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"
)

func TestPageLayout(t *testing.T) {
	if got := int(unsafe.Sizeof(page{})); got != pageBytes {
		t.Fatalf("page is %d bytes, pageBytes says %d", got, pageBytes)
	}
	// A whole number of 8 KiB runtime pages: a large allocation wastes nothing.
	if pageBytes%8192 != 0 {
		t.Fatalf("page size %d is not a multiple of 8 KiB", pageBytes)
	}
	if MaxTimeoutBuckets > bucketMask+1 || flagInit&bucketMask != 0 || flagFailed&bucketMask != 0 || flagInit&flagFailed != 0 {
		t.Fatal("meta fields overlap")
	}
}

func TestSlotsFor(t *testing.T) {
	tests := []struct{ n, want int }{
		{0, minSlots}, {48, 64}, {49, 96}, {72, 96}, {73, 144},
		{807_123, 1_076_167}, {807_124, 1_614_250}, {1_000_000, 1_614_250},
	}
	for _, tt := range tests {
		if got := slotsFor(tt.n); got != tt.want {
			t.Errorf("slotsFor(%d) = %d, want %d", tt.n, got, tt.want)
		}
	}
}

// idSchemes are root id sequences that defeat weak hashes.
var idSchemes = map[string]func(i int) RootID{
	"adjacent":    func(i int) RootID { return RootID(1<<40 + i) },
	"high bits":   func(i int) RootID { return RootID(uint64(i) << 44) },
	"top bits":    func(i int) RootID { return RootID(bitsReverse(uint64(i))) },
	"stride 2^32": func(i int) RootID { return RootID(uint64(i)<<32 | 0xffff) },
	"random":      func(i int) RootID { return RootID(rand.New(rand.NewPCG(uint64(i), 1)).Uint64()) },
}

// bitsReverse puts i's low bits at the top, so ids differ only in high bits.
func bitsReverse(x uint64) uint64 {
	var r uint64
	for range 64 {
		r = r<<1 | x&1
		x >>= 1
	}
	return r
}

// maxProbe returns the largest displacement in the index.
func maxProbe(tb *table) int {
	worst := 0
	for _, s := range tb.index {
		worst = max(worst, int(s>>indexBits))
	}
	return worst
}

func TestCollisionProneIDs(t *testing.T) {
	const n = 50_000
	for name, id := range idSchemes {
		t.Run(name, func(t *testing.T) {
			tr := mustNew(t, Config{})
			for i := range n {
				if o := tr.Init(id(i), uint64(i)|1, TaskID(i%7)); o.Status != Pending {
					t.Fatalf("Init %d: %v", i, o)
				}
			}
			if tr.Len() != n {
				t.Fatalf("Len() = %d, want %d", tr.Len(), n)
			}
			checkInvariants(t, tr)
			// Robin Hood probing at load <= 3/4 with a good hash keeps
			// displacements short; a weak hash on these ids would overflow
			// them and balloon the index.
			if p := maxProbe(&tr.tab); p > 16 || len(tr.tab.index) != slotsFor(n) {
				t.Errorf("longest displacement %d, index %d slots (want %d)", p, len(tr.tab.index), slotsFor(n))
			}
			// Complete every other root in a shuffled order, and check the
			// rest are still found with their values.
			order := rand.New(rand.NewPCG(7, 7)).Perm(n)
			for _, i := range order {
				if i%2 == 0 {
					if o := tr.Ack(id(i), uint64(i)|1); o != completed(id(i), TaskID(i%7)) {
						t.Fatalf("Ack %d: %v", i, o)
					}
				}
			}
			checkInvariants(t, tr)
			for i := 1; i < n; i += 2 {
				e, _, _ := tr.tab.find(id(i))
				if e < 0 {
					t.Fatalf("root %d lost", i)
				}
				p, j := tr.tab.at(e)
				if p.val[j] != uint64(i)|1 || p.task[j] != TaskID(i%7) {
					t.Fatalf("root %d has value %x task %d", i, p.val[j], p.task[j])
				}
			}
		})
	}
}

func TestGrowAndShrink(t *testing.T) {
	const n = 300_000
	tr := mustNew(t, Config{})
	empty := tr.Footprint()
	for i := range n {
		tr.Init(RootID(i), uint64(i)+1, 1)
		if i%50_000 == 0 {
			checkInvariants(t, tr)
		}
	}
	checkInvariants(t, tr)
	full := tr.Footprint()
	if perTree := float64(full) / n; perTree > 32 {
		t.Errorf("footprint %.1f bytes per tree at %d trees, want <= 32", perTree, n)
	}
	for i := range n {
		if o := tr.Ack(RootID(i), uint64(i)+1); o.Status != Completed {
			t.Fatalf("Ack %d: %v", i, o)
		}
		if i%50_000 == 0 {
			checkInvariants(t, tr)
		}
	}
	checkInvariants(t, tr)
	if tr.Len() != 0 {
		t.Fatalf("Len() = %d", tr.Len())
	}
	// Everything is freed except one spare page.
	if got, limit := tr.Footprint(), empty+pageBytes+8*cap(tr.tab.pages); got > limit {
		t.Errorf("footprint %d after draining, want <= %d (empty %d)", got, limit, empty)
	}
	if len(tr.tab.index) != minSlots {
		t.Errorf("index has %d slots after draining, want %d", len(tr.tab.index), minSlots)
	}
	t.Logf("footprint: empty %d B, %d trees %d B (%.1f B/tree), drained %d B", empty, n, full, float64(full)/n, tr.Footprint())
}

func TestChurnDoesNotGrow(t *testing.T) {
	const window, rounds = 20_000, 400_000
	tr := mustNew(t, Config{})
	rng := rand.New(rand.NewPCG(1, 2))
	var ring [window]RootID
	for i := range window {
		ring[i] = RootID(rng.Uint64())
		tr.Init(ring[i], 1, 0)
	}
	var settled int
	for i := range rounds {
		k := rng.IntN(window) // complete a random pending tree, start a new one
		if o := tr.Ack(ring[k], 1); o.Status != Completed {
			t.Fatalf("round %d: %v", i, o)
		}
		ring[k] = RootID(rng.Uint64())
		tr.Init(ring[k], 1, 0)
		if i == rounds/4 {
			settled = tr.Footprint()
		}
		if i > rounds/4 && tr.Footprint() != settled {
			t.Fatalf("round %d: footprint %d, was %d", i, tr.Footprint(), settled)
		}
	}
	checkInvariants(t, tr)
	if tr.Len() != window {
		t.Fatalf("Len() = %d", tr.Len())
	}
}

func TestChurnAcrossPageBoundary(t *testing.T) {
	// Oscillating around a page boundary frees and allocates at most one
	// page, and the slab never keeps more than one spare page.
	tr := mustNew(t, Config{})
	next := RootID(0)
	for range 3 * pageSize {
		tr.Init(next, 1, 0)
		next++
	}
	live := make([]RootID, 0, 3*pageSize)
	for r := range next {
		live = append(live, r)
	}
	for round := range 6 {
		for range pageSize + pageSize/2 { // down one and a half pages
			r := live[len(live)-1]
			live = live[:len(live)-1]
			tr.Ack(r, 1)
		}
		checkInvariants(t, tr)
		for range pageSize + pageSize/2 { // and back up
			tr.Init(next, 1, 0)
			live = append(live, next)
			next++
		}
		checkInvariants(t, tr)
		if len(tr.tab.pages) > 4 {
			t.Fatalf("round %d: %d pages for %d entries", round, len(tr.tab.pages), tr.Len())
		}
	}
}

func TestInitialCapacity(t *testing.T) {
	const c = 100_000
	tr := mustNew(t, Config{InitialCapacity: c})
	before := tr.Footprint()
	if len(tr.tab.pages)*pageSize < c || len(tr.tab.index)/4*3 < c {
		t.Fatalf("not pre-sized: %d pages, %d slots", len(tr.tab.pages), len(tr.tab.index))
	}
	for i := range c {
		tr.Init(RootID(i), 1, 0)
	}
	if tr.Footprint() != before {
		t.Fatalf("footprint grew from %d to %d within the initial capacity", before, tr.Footprint())
	}
	for i := range c {
		tr.Ack(RootID(i), 1)
	}
	if tr.Footprint() != before {
		t.Fatalf("footprint went from %d to %d, below the initial capacity", before, tr.Footprint())
	}
	checkInvariants(t, tr)
}

func TestTickAtScale(t *testing.T) {
	for path, bulkMin := range expiryPaths {
		t.Run(path, func(t *testing.T) { testTickAtScale(t, bulkMin) })
	}
}

func testTickAtScale(t *testing.T, bulkMin int) {
	const n = 100_000
	tr := mustNew(t, Config{TimeoutBuckets: 3})
	tr.bulkMin = bulkMin
	want := map[RootID]TaskID{}
	for i := range n {
		r := RootID(uint64(i) << 40)
		tr.Init(r, 1, TaskID(i%5))
		if i%3 == 0 {
			want[r] = TaskID(i % 5)
		}
	}
	tick(tr)
	for i := range n { // two thirds are refreshed and survive the next two ticks
		if i%3 != 0 {
			tr.ResetTimeout(RootID(uint64(i) << 40))
		}
	}
	if got := tick(tr); len(got) != 0 {
		t.Fatalf("expired %d early", len(got))
	}
	got := tick(tr)
	if len(got) != len(want) {
		t.Fatalf("expired %d, want %d", len(got), len(want))
	}
	for _, o := range got {
		if task, ok := want[o.Root]; !ok || task != o.SpoutTask || o.Status != TimedOut {
			t.Fatalf("unexpected expiry %v", o)
		}
	}
	checkInvariants(t, tr)
	if tr.Len() != n-len(want) {
		t.Fatalf("Len() = %d", tr.Len())
	}
}

// unmix inverts mix, to build roots with chosen hashes.
func unmix(x uint64) uint64 {
	inverse := func(c uint64) uint64 { // Newton's iteration mod 2^64
		inv := c
		for range 6 {
			inv *= 2 - c*inv
		}
		return inv
	}
	x ^= x>>31 ^ x>>62
	x *= inverse(0x94d049bb133111eb)
	x ^= x>>27 ^ x>>54
	x *= inverse(0xbf58476d1ce4e5b9)
	x ^= x>>30 ^ x>>60
	return x
}

func TestUnmix(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 1000 {
		x := rng.Uint64()
		if mix(unmix(x)) != x {
			t.Fatalf("mix(unmix(%x)) = %x", x, mix(unmix(x)))
		}
	}
}

// TestDisplacementOverflow feeds roots whose hashes are so close that they
// share a home slot in a small index: more of them than a slot's
// displacement field can count. The index grows until they spread out.
// Descending hashes make every insertion displace the earlier roots, so the
// overflow shows up while a displaced slot is carried forward.
func TestDisplacementOverflow(t *testing.T) {
	const n = 200
	for _, order := range []string{"ascending", "descending", "shuffled"} {
		t.Run(order, func(t *testing.T) {
			tr := mustNew(t, Config{})
			roots := make([]RootID, n)
			for i := range roots {
				roots[i] = RootID(unmix(0x1234_5678_0000_0000 + uint64(i)<<54))
			}
			switch order {
			case "descending":
				slices.Reverse(roots)
			case "shuffled":
				rand.New(rand.NewPCG(5, 6)).Shuffle(n, func(i, j int) { roots[i], roots[j] = roots[j], roots[i] })
			}
			for _, r := range roots {
				tr.Init(r, 1, 0)
			}
			checkInvariants(t, tr)
			if len(tr.tab.index) <= slotsFor(n) {
				t.Fatalf("index has %d slots; the overflow should have grown it past %d", len(tr.tab.index), slotsFor(n))
			}
			for i, r := range roots {
				if i%2 == 0 {
					if o := tr.Ack(r, 1); o.Status != Completed {
						t.Fatalf("Ack %d: %v", i, o)
					}
					checkInvariants(t, tr)
				}
			}
			for i, r := range roots {
				if e, _, _ := tr.tab.find(r); (e >= 0) != (i%2 == 1) {
					t.Fatalf("root %d: entry %d", i, e)
				}
			}
			for i := 1; i < n; i += 2 {
				tr.Ack(roots[i], 1)
			}
			checkInvariants(t, tr)
			if tr.Len() != 0 || len(tr.tab.index) != minSlots {
				t.Fatalf("Len %d, index %d slots after draining", tr.Len(), len(tr.tab.index))
			}
		})
	}
}

// TestIndexCollisionPanics feeds roots with consecutive hashes, which
// share a home slot at any sane index size: the tracker refuses them
// rather than growing without bound.
func TestIndexCollisionPanics(t *testing.T) {
	tr := mustNew(t, Config{})
	mustPanic(t, "colliding roots", func() {
		for i := range uint64(1000) {
			tr.Init(RootID(unmix(0xabcd_0000_0000_0000+i)), 1, 0)
		}
	})
}
