package acker

import "math/bits"

// The pending table holds one entry per tracked root in a dense slab of
// fixed-size pages, struct-of-arrays within each page, plus an
// open-addressing index of uint32 slots that maps a root to its entry
// number.
//
// Slab: entries 0..n-1 are live, with no holes. Removing entry e moves the
// last entry into e (and repoints its index slot), so the slab stays dense,
// Tick scans only live entries, and pages past the end can be freed. Pages
// are never copied when the slab grows.
//
// Index: Robin Hood linear probing. A slot is 0 when empty, otherwise
// disp<<indexBits | (entry+1), where disp is the slot's distance from the
// root's home slot. Robin Hood insertion keeps every probe run sorted by
// home, which gives three things without touching the slab: a lookup only
// compares roots whose home is its own (disp equal to its probe distance)
// and stops as soon as a slot's disp is smaller than its probe distance;
// deletion shifts the rest of the run back one slot, decrementing disp,
// with no tombstones and no rehashing; and displacements stay small. A
// root's home is its hash scaled to the index size (a multiply), so the
// size need not be a power of two: the index grows by half at 3/4 load and
// shrinks by a third below 3/16 load, never below its initial size: 5.3 to
// 8 bytes per entry as the table grows, more while a shrinking table waits
// out the hysteresis. An insertion that would need a displacement above
// maxDisp grows the index instead.

const (
	pageShift = 12
	pageSize  = 1 << pageShift // entries per page; 22 B × 4096 = 11 runtime pages of 8 KiB
	pageMask  = pageSize - 1

	indexBits = 26 // entry number bits in an index slot
	slotEntry = 1<<indexBits - 1
	dispOne   = 1 << indexBits // a displacement of one, in a slot
	maxDisp   = 1<<(32-indexBits) - 1

	minSlots = 64
)

// Entry meta: two flags and the timeout bucket.
const (
	bucketBits = 14
	bucketMask = 1<<bucketBits - 1
	flagFailed = 1 << 14
	flagInit   = 1 << 15
)

// page holds pageSize entries, one array per field. It contains no
// pointers, so the garbage collector never scans it.
type page struct {
	root [pageSize]uint64
	val  [pageSize]uint64
	task [pageSize]TaskID
	meta [pageSize]uint16
}

// pageBytes is the size of a page: 8+8+4+2 bytes per entry, no padding.
const pageBytes = pageSize * (8 + 8 + 4 + 2)

type table struct {
	pages    []*page
	n        int // live entries, numbered 0..n-1
	minPages int // pages kept even when empty (InitialCapacity)

	index    []uint32
	growAt   int // grow the index when n reaches this
	shrinkAt int // shrink the index when n drops below this
	floor    int // the index never shrinks below this many slots
}

// mix is the splitmix64 finalizer: every input bit affects every output
// bit, so adjacent ids and ids that differ only in high bits spread evenly.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// home returns the home slot of a root.
func (tb *table) home(root uint64) int {
	hi, _ := bits.Mul64(mix(root), uint64(len(tb.index)))
	return int(hi)
}

// next returns the slot after pos, wrapping around.
func (tb *table) next(pos int) int {
	pos++
	if pos == len(tb.index) {
		pos = 0
	}
	return pos
}

// grown returns the index size after growing from s.
func grown(s int) int { return s + s/2 }

// slotsFor returns the initial index size for n entries: the first size in
// the growth sequence from minSlots that keeps the load at or below 3/4.
func slotsFor(n int) int {
	s := minSlots
	for s/4*3 < n {
		s = grown(s)
	}
	return s
}

func (tb *table) init(capacity int) {
	tb.floor = slotsFor(capacity)
	tb.setIndex(tb.floor)
	tb.minPages = (capacity + pageMask) >> pageShift
	for len(tb.pages) < tb.minPages {
		tb.pages = append(tb.pages, new(page))
	}
}

// at returns the page and offset of entry e.
func (tb *table) at(e int) (*page, int) {
	return tb.pages[e>>pageShift], e & pageMask
}

// find returns the entry holding root and its index slot. When root is
// absent it returns e = -1 and the slot and displacement (in slot form)
// where root's Robin Hood insertion starts, or pos = -1 when that would
// need a displacement above maxDisp.
func (tb *table) find(root RootID) (e, pos int, disp uint32) {
	pos = tb.home(uint64(root))
	for d := uint32(0); ; d += dispOne {
		s := tb.index[pos]
		if s == 0 || s&^slotEntry < d {
			return -1, pos, d
		}
		if s&^slotEntry == d {
			e = int(s&slotEntry) - 1
			if tb.pages[e>>pageShift].root[e&pageMask] == uint64(root) {
				return e, pos, d
			}
		}
		if d == maxDisp<<indexBits {
			return -1, -1, 0
		}
		pos = tb.next(pos)
	}
}

// insert appends an entry for root, which must be absent, with the given
// meta, value 0 and no task, and returns it with its index slot. pos and
// disp are what find returned.
func (tb *table) insert(root RootID, pos int, disp uint32, meta uint16) (e, newPos int) {
	if tb.n >= MaxPending {
		panic("acker: more than MaxPending pending trees")
	}
	if tb.n >= tb.growAt {
		tb.resize(grown(len(tb.index)))
		_, pos, disp = tb.find(root)
	}
	e = tb.n
	if e>>pageShift == len(tb.pages) {
		tb.pages = append(tb.pages, new(page))
	}
	p, j := tb.at(e)
	p.root[j] = uint64(root)
	p.val[j] = 0
	p.task[j] = NoTask
	p.meta[j] = meta
	tb.n++
	if pos < 0 || !tb.place(pos, disp|uint32(e+1)) {
		tb.overflowed()
		return e, tb.slotOf(e)
	}
	return e, pos
}

// place puts slot s, whose displacement is right for pos, at pos, the
// first candidate for it: Robin Hood insertion, where a slot further from
// its home takes the place of one nearer to its own, which moves on. It
// reports false, leaving a slot unplaced, if a displacement would exceed
// maxDisp.
func (tb *table) place(pos int, s uint32) bool {
	for {
		cur := tb.index[pos]
		if cur == 0 {
			tb.index[pos] = s
			return true
		}
		if cur&^slotEntry < s&^slotEntry {
			tb.index[pos], s = s, cur
		}
		if s>>indexBits == maxDisp {
			return false
		}
		s += dispOne
		pos = tb.next(pos)
	}
}

// overflowed grows the index after a failed place until every entry fits,
// which with random roots practically never happens: it takes dozens of
// roots with nearly equal hashes. It then holds off shrinking until the
// table has lost half its entries, so that a shrink does not overflow again
// at once. It panics if the index would have to be far larger than usual.
func (tb *table) overflowed() {
	limit := 16 * max(tb.floor, slotsFor(tb.n))
	for slots := grown(len(tb.index)); ; slots = grown(slots) {
		if slots > limit {
			panic("acker: root ids collide in the index hash")
		}
		if tb.setIndex(slots) {
			tb.shrinkAt = min(tb.shrinkAt, tb.n/2)
			return
		}
	}
}

// slotOf returns the index slot that points at entry e.
func (tb *table) slotOf(e int) int {
	p, j := tb.at(e)
	want := uint32(e + 1)
	pos := tb.home(p.root[j])
	for tb.index[pos]&slotEntry != want {
		pos = tb.next(pos)
	}
	return pos
}

// remove deletes entry e, whose index slot is pos. The last entry moves
// into e, so entry numbers above e are not stable across a remove.
func (tb *table) remove(e, pos int) {
	tb.clearSlot(pos)
	last := tb.n - 1
	if e != last {
		lpos := tb.slotOf(last)
		tb.index[lpos] = tb.index[lpos]&^slotEntry | uint32(e+1)
		lp, lj := tb.at(last)
		p, j := tb.at(e)
		p.root[j] = lp.root[lj]
		p.val[j] = lp.val[lj]
		p.task[j] = lp.task[lj]
		p.meta[j] = lp.meta[lj]
	}
	tb.n = last
	if tb.n&pageMask == 0 {
		tb.releasePages()
	}
	if tb.n < tb.shrinkAt && len(tb.index) > tb.floor {
		tb.resize(tb.shrunk())
	}
}

// shrunk returns the index size one shrink step down, not below the floor.
func (tb *table) shrunk() int { return max(tb.floor, len(tb.index)*2/3) }

// clearSlot empties slot pos and shifts the rest of its run back by one,
// up to an empty slot or a slot at its home.
func (tb *table) clearSlot(pos int) {
	for {
		i := tb.next(pos)
		s := tb.index[i]
		if s < dispOne { // empty, or at its home
			break
		}
		tb.index[pos] = s - dispOne
		pos = i
	}
	tb.index[pos] = 0
}

// releasePages frees the pages past the end of the slab, keeping one spare
// page so that churn around a page boundary does not allocate.
func (tb *table) releasePages() {
	keep := max(tb.n>>pageShift+1, tb.minPages)
	for len(tb.pages) > keep {
		tb.pages[len(tb.pages)-1] = nil
		tb.pages = tb.pages[:len(tb.pages)-1]
	}
}

// setIndex rebuilds the index with the given size, reusing the current
// array when the size is unchanged, and reinserts every entry. It reports
// false if a displacement overflowed; the index is then incomplete and
// must be rebuilt larger.
func (tb *table) setIndex(slots int) bool {
	if slots == len(tb.index) {
		clear(tb.index)
	} else {
		tb.index = make([]uint32, slots)
	}
	tb.growAt = slots / 4 * 3
	tb.shrinkAt = slots / 16 * 3
	for e := 0; e < tb.n; e++ {
		if !tb.place(tb.home(tb.pages[e>>pageShift].root[e&pageMask]), uint32(e+1)) {
			return false
		}
	}
	return true
}

// compacted finishes a bulk removal that left n live entries at the front
// of the slab: it frees pages, resizes the index for n entries within the
// usual hysteresis, and rebuilds it.
func (tb *table) compacted(n int) {
	tb.n = n
	tb.releasePages()
	slots := len(tb.index)
	for slots > tb.floor && n < slots/16*3 {
		slots = max(tb.floor, slots*2/3)
	}
	tb.resize(slots)
}

// resize rebuilds the index with the given size, or larger if needed.
func (tb *table) resize(slots int) {
	if !tb.setIndex(slots) {
		tb.overflowed()
	}
}

// footprint returns the bytes held by the slab and the index.
func (tb *table) footprint() int {
	return len(tb.pages)*pageBytes + cap(tb.pages)*8 + len(tb.index)*4
}
