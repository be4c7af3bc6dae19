package acker

import (
	"slices"
	"testing"
)

// mustNew returns a Tracker for cfg or stops the test.
func mustNew(t testing.TB, cfg Config) *Tracker {
	t.Helper()
	tr, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	return tr
}

// tick calls Tick and returns the expired outcomes sorted by root.
func tick(tr *Tracker) []Outcome {
	var out []Outcome
	tr.Tick(func(o Outcome) { out = append(out, o) })
	slices.SortFunc(out, func(a, b Outcome) int {
		switch {
		case a.Root < b.Root:
			return -1
		case a.Root > b.Root:
			return 1
		}
		return 0
	})
	return out
}

// fataler is what checkInvariants needs from *testing.T and *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// checkInvariants verifies the table's internal structure: a dense slab,
// an index that finds every entry from its home slot, bucket counts that
// match the entries, and bounded pages and index size.
func checkInvariants(t fataler, tr *Tracker) {
	t.Helper()
	tb := &tr.tab
	if tb.n < 0 || tb.n > len(tb.pages)*pageSize {
		t.Fatalf("n = %d with %d pages", tb.n, len(tb.pages))
	}
	if limit := max(tb.n>>pageShift+2, tb.minPages); len(tb.pages) > limit {
		t.Fatalf("%d pages held for %d entries (limit %d)", len(tb.pages), tb.n, limit)
	}
	for i, p := range tb.pages {
		if p == nil {
			t.Fatalf("page %d is nil", i)
		}
	}
	if len(tb.index) < tb.floor {
		t.Fatalf("index has %d slots (floor %d)", len(tb.index), tb.floor)
	}
	if tb.n > tb.growAt {
		t.Fatalf("index overloaded: %d entries, grow at %d", tb.n, tb.growAt)
	}
	if len(tb.index) > tb.floor && tb.n < tb.shrinkAt {
		t.Fatalf("index not shrunk: %d entries in %d slots", tb.n, len(tb.index))
	}
	used := 0
	for pos, s := range tb.index {
		if s == 0 {
			continue
		}
		used++
		e := int(s&slotEntry) - 1
		if e < 0 || e >= tb.n {
			t.Fatalf("slot %d points at entry %d of %d", pos, e, tb.n)
		}
		home := tb.home(tb.pages[e>>pageShift].root[e&pageMask])
		d := pos - home
		if d < 0 {
			d += len(tb.index)
		}
		if int(s>>indexBits) != d {
			t.Fatalf("slot %d (entry %d, home %d) says displacement %d", pos, e, home, s>>indexBits)
		}
		// Robin Hood order: a run never has a gap, and a slot is at most
		// one further from its home than the slot before it.
		if d > 0 {
			prev := tb.index[(pos+len(tb.index)-1)%len(tb.index)]
			if prev == 0 || int(prev>>indexBits) < d-1 {
				t.Fatalf("slot %d has displacement %d after slot %x", pos, d, prev)
			}
		}
	}
	if used != tb.n {
		t.Fatalf("index holds %d slots for %d entries", used, tb.n)
	}
	counts := make([]int, len(tr.counts))
	seen := make(map[uint64]bool, tb.n)
	for e := 0; e < tb.n; e++ {
		p, j := tb.at(e)
		if seen[p.root[j]] {
			t.Fatalf("root %x held twice", p.root[j])
		}
		seen[p.root[j]] = true
		if got, _, _ := tb.find(RootID(p.root[j])); got != e {
			t.Fatalf("find(%x) = %d, want %d", p.root[j], got, e)
		}
		b := int(p.meta[j] & bucketMask)
		if b >= len(counts) {
			t.Fatalf("entry %d in bucket %d of %d", e, b, len(counts))
		}
		counts[b]++
		if p.meta[j]&flagInit == 0 && p.task[j] != NoTask {
			t.Fatalf("entry %d has task %d before its init", e, p.task[j])
		}
	}
	if !slices.Equal(counts, tr.counts) {
		t.Fatalf("bucket counts %v, want %v", tr.counts, counts)
	}
}
