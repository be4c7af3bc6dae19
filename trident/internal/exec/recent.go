package exec

// recentStrings is a small direct-mapped cache in front of a GroupIndex's
// map of string keys: each slot holds the last key that landed in it and
// that key's group. A batch's words repeat (a vocabulary of tens to
// thousands of words over tens of thousands of tuples), and a probe here
// costs a few byte loads, a multiplication and one string comparison,
// where the map hashes the whole string and probes its groups: a third of
// a word count's time went to that map (docs/PERFORMANCE.md, issue 26).
//
// The slot is chosen from the length and three bytes of the key, which
// needs no hashing of the whole string but lets keys that share them
// share a slot. Such keys, chosen by an adversary or not, only make the
// cache miss: a miss costs the probe on top of the map lookup it would
// have been, and the map stays the index. A cache that keeps missing
// (a vocabulary much larger than it) switches itself off.
type recentStrings[G any] struct {
	// slots is a power of two long: one slot while the index is small
	// or the cache off (a shift of 64 makes every slot number 0).
	slots []recentSlot[G]
	shift uint8 // 64 - log2(len(slots))
	// hits and misses count probes since the cache last grew; off is set
	// once misses outnumber hits over a full round of probes.
	hits, misses int
	off          bool
}

type recentSlot[G any] struct {
	key string
	g   *G // nil for an empty slot
}

const (
	// recentFrom is the number of distinct strings from which an index
	// keeps a cache: a map of up to 8 entries is one group of the map,
	// searched without hashing, as fast as the cache.
	recentFrom = 9
	// recentPerKey is the number of slots per distinct string the cache
	// grows to, so that few keys share a slot.
	recentPerKey = 16
	// recentMaxSlots bounds the cache (24 bytes a slot: 24 KiB).
	recentMaxSlots = 1 << 10
	// recentRound is the number of probes after which a cache that
	// missed more than it hit is switched off.
	recentRound = 1 << 12
)

// newRecentStrings returns a cache of one slot.
func newRecentStrings[G any]() recentStrings[G] {
	return recentStrings[G]{slots: make([]recentSlot[G], 1), shift: 64}
}

// find returns the group of key s if the key is in its slot, else nil.
// It is small enough to be inlined: an empty slot (key "", group nil)
// answers nil for the empty string, counted as a hit.
func (r *recentStrings[G]) find(s string) *G {
	sl := &r.slots[recentSlotOf(s, r.shift)]
	if sl.key != s {
		return nil
	}
	r.hits++
	return sl.g
}

// put records that key s leads to group g, in place of the key that
// held its slot. It is called after each miss of find.
func (r *recentStrings[G]) put(s string, g *G) {
	if r.off {
		return // the slot keeps a key that still leads to its group
	}
	r.slots[recentSlotOf(s, r.shift)] = recentSlot[G]{key: s, g: g}
	r.miss()
}

// recentSlotOf returns the slot of key s in a cache of 1<<(64-shift)
// slots: a multiplicative hash of its length and its first, middle and
// last bytes, whose top bits depend on all of them.
func recentSlotOf(s string, shift uint8) uint64 {
	h := uint64(len(s))
	if len(s) > 0 {
		h |= uint64(s[0])<<32 | uint64(s[len(s)>>1])<<40 | uint64(s[len(s)-1])<<48
	}
	return h * 0x9e3779b97f4a7c15 >> shift
}

// miss counts a miss and switches the cache off at the end of a round in
// which it missed more than it hit.
func (r *recentStrings[G]) miss() {
	r.misses++
	if r.hits+r.misses < recentRound {
		return
	}
	if r.misses > r.hits {
		r.slots, r.shift, r.off = r.slots[:1], 64, true
	}
	r.hits, r.misses = 0, 0
}

// reset empties the cache, keeping its slots, and switches it back on
// (a cache switched off kept one slot).
func (r *recentStrings[G]) reset() {
	clear(r.slots)
	r.hits, r.misses, r.off = 0, 0, false
}

// grow makes the cache room for keys distinct strings, emptying it, when
// it has fewer than recentPerKey slots for each (up to recentMaxSlots).
func (r *recentStrings[G]) grow(keys int) {
	if r.off || keys < recentFrom || len(r.slots) >= min(recentPerKey*keys, recentMaxSlots) {
		return
	}
	n, shift := 64, uint8(64-6)
	for n < recentPerKey*keys && n < recentMaxSlots {
		n, shift = 2*n, shift-1
	}
	r.slots, r.shift = make([]recentSlot[G], n), shift
	r.hits, r.misses = 0, 0
}
