package topology

import "math/bits"

// pendingTree is a tree a spout task emitted and waits on.
type pendingTree struct {
	root    RootID
	msgID   any
	emitted int64 // nanoseconds since the executor's epoch
}

// pendingTable is a spout task's pending trees by root id. A Go map of
// them (48-byte slots) took 74 bytes per tree at 100,000 trees and 117 at
// 1,000,000 (it grows in steps); this table keeps the trees in a dense
// slice of 32-byte entries, reusing freed ones, and finds them through an
// open-addressing index of 4-byte entry numbers: 41 and 45 bytes per tree
// (live heap after a collection, measured side by side).
//
// Root ids are random (executor.edgeID), so the index needs no stronger
// hash than a multiplication. A table above keptIndex shrinks when it is
// less than an eighth full, so a burst of pending trees does not keep its
// memory.
type pendingTable struct {
	trees []pendingTree // entries; a free one has root 0
	free  []uint32      // numbers of the free entries
	index []uint32      // entry number + 1 per slot, 0 if empty; len is a power of two
	shift uint          // 64 - log2(len(index))
	n     int
}

const (
	minIndex = 16 // the smallest index the table allocates
	// keptIndex is the largest index the table keeps however few trees
	// it holds (about 2.3 MiB of index and entries at its fullest): below
	// it, shrinking and growing again as the pending count swings with
	// max spout pending would cost more than it saves.
	keptIndex = 1 << 16
)

func (p *pendingTable) len() int { return p.n }

// slot returns the index slot root's probe sequence starts at.
func (p *pendingTable) slot(root RootID) int {
	return int((uint64(root) * 0x9E3779B97F4A7C15) >> p.shift)
}

// find returns the index slot that holds root, or -1.
func (p *pendingTable) find(root RootID) int {
	if p.n == 0 {
		return -1
	}
	mask := len(p.index) - 1
	for i := p.slot(root); ; i = (i + 1) & mask {
		e := p.index[i]
		if e == 0 {
			return -1
		}
		if p.trees[e-1].root == root {
			return i
		}
	}
}

func (p *pendingTable) has(root RootID) bool { return p.find(root) >= 0 }

// add records a tree whose root is not in the table (and not 0).
func (p *pendingTable) add(t pendingTree) {
	if (p.n+1)*8 > len(p.index)*7 {
		p.rehash(max(minIndex, 2*len(p.index)))
	}
	var e uint32
	if k := len(p.free); k > 0 {
		e = p.free[k-1]
		p.free = p.free[:k-1]
		p.trees[e] = t
	} else {
		e = uint32(len(p.trees))
		p.trees = append(p.trees, t)
	}
	p.place(e)
	p.n++
}

// place puts entry number e into the index.
func (p *pendingTable) place(e uint32) {
	mask := len(p.index) - 1
	i := p.slot(p.trees[e].root)
	for p.index[i] != 0 {
		i = (i + 1) & mask
	}
	p.index[i] = e + 1
}

// take removes root's tree and returns it; ok is false if it is not pending.
func (p *pendingTable) take(root RootID) (t pendingTree, ok bool) {
	i := p.find(root)
	if i < 0 {
		return pendingTree{}, false
	}
	e := p.index[i] - 1
	t = p.trees[e]
	p.remove(i, e)
	return t, true
}

// remove frees entry e, found at index slot i, and closes the gap it
// leaves in its probe sequence (backward-shift deletion).
func (p *pendingTable) remove(i int, e uint32) {
	p.trees[e] = pendingTree{}
	p.free = append(p.free, e)
	p.n--
	mask := len(p.index) - 1
	for j := (i + 1) & mask; p.index[j] != 0; j = (j + 1) & mask {
		home := p.slot(p.trees[p.index[j]-1].root)
		// Move j's entry into the gap at i unless its home lies
		// cyclically in (i, j], where it would no longer be found.
		if (j-home)&mask >= (j-i)&mask {
			p.index[i], i = p.index[j], j
		}
	}
	p.index[i] = 0
	switch {
	case len(p.index) > keptIndex && p.n*8 < len(p.index):
		p.rehash(max(keptIndex, 1<<bits.Len(uint(p.n*2))))
	case p.n == 0:
		p.trees, p.free = p.trees[:0], p.free[:0] // the index is all empty
	}
}

// rehash compacts the entries and rebuilds the index with size slots.
func (p *pendingTable) rehash(size int) {
	live := make([]pendingTree, 0, p.n) // appends grow it as the index fills
	for _, t := range p.trees {
		if t.root != 0 {
			live = append(live, t)
		}
	}
	p.trees, p.free = live, nil
	p.index = make([]uint32, size)
	p.shift = uint(64 - bits.TrailingZeros(uint(size)))
	for e := range p.trees {
		p.place(uint32(e))
	}
}

// removeIf removes, in no particular order, the trees for which drop
// reports true and then calls dropped with each, which may add trees to
// the table (it typically calls Spout.Fail, which may emit).
func (p *pendingTable) removeIf(drop func(*pendingTree) bool, dropped func(pendingTree)) {
	var gone []pendingTree
	for e := range p.trees {
		if t := &p.trees[e]; t.root != 0 && drop(t) {
			gone = append(gone, *t)
		}
	}
	for _, t := range gone {
		if i := p.find(t.root); i >= 0 {
			p.remove(i, p.index[i]-1)
		}
	}
	for _, t := range gone {
		dropped(t)
	}
}
