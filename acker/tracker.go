package acker

// defaultBulkMin is the smallest expiry that Tick handles in bulk.
const defaultBulkMin = 1024

// Tracker tracks pending tuple trees by root: Storm's acker state machine
// with the timeout kept here rather than in the spout. Create one with New.
// A Tracker is not safe for concurrent use; one goroutine owns it.
type Tracker struct {
	tab     table
	counts  []int  // live entries per timeout bucket
	cur     uint16 // the newest bucket: Init, ResetTimeout, Fail and new entries go here
	ticking bool   // inside Tick's callback
	bulkMin int    // expire in bulk when at least this many, and 1/16 of all, expire
}

// New returns an empty Tracker, or an error wrapping ErrConfig when cfg is
// invalid.
func New(cfg Config) (*Tracker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	t := &Tracker{counts: make([]int, cfg.buckets()), bulkMin: defaultBulkMin}
	t.tab.init(cfg.InitialCapacity)
	return t, nil
}

// Init records a root's init message: the XOR of the edge ids of the spout
// tuples and the spout task that emitted them. It moves the root to the
// newest timeout bucket. An init value of zero (a spout tuple with no
// targets) completes the tree at once, unless a fail arrived first.
func (t *Tracker) Init(root RootID, xor uint64, spoutTask TaskID) Outcome {
	e, pos, p, j := t.upsert(root)
	p.val[j] ^= xor
	p.task[j] = spoutTask
	p.meta[j] |= flagInit
	t.touch(p, j)
	return t.settle(e, pos, p, j)
}

// Ack records an ack message: the acked tuple's edge id XOR the edge ids of
// the tuples anchored to it. It does not refresh the root's timeout.
func (t *Tracker) Ack(root RootID, xor uint64) Outcome {
	e, pos, p, j := t.upsert(root)
	p.val[j] ^= xor
	return t.settle(e, pos, p, j)
}

// Fail records that a tuple of the tree failed. Once the init has arrived
// the tree is Failed; a fail before the init is kept, and the init then
// reports Failed. Like Storm, it moves the root to the newest timeout
// bucket (which matters only before the init).
func (t *Tracker) Fail(root RootID) Outcome {
	e, pos, p, j := t.upsert(root)
	p.meta[j] |= flagFailed
	t.touch(p, j)
	return t.settle(e, pos, p, j)
}

// ResetTimeout moves the root to the newest timeout bucket, so the tree
// gets a full timeout from now. It reports Pending with the spout task
// (NoTask before the init), which the caller may forward to the spout.
func (t *Tracker) ResetTimeout(root RootID) Outcome {
	e, pos, p, j := t.upsert(root)
	t.touch(p, j)
	return t.settle(e, pos, p, j)
}

// Tick rotates the timeout buckets and calls expired once for every root
// that timed out (Status TimedOut; SpoutTask may be NoTask if the init never
// arrived). Expired roots are removed before expired is called for them.
// A root expires on the TimeoutBuckets-th Tick after the last Init,
// ResetTimeout or Fail for it, or after its first message if none of those
// came.
//
// expired must not be nil and must not call the Tracker's methods other
// than Len; doing either panics. If expired panics, the roots not yet
// reported stay tracked and expire one full rotation later.
func (t *Tracker) Tick(expired func(Outcome)) {
	t.enter()
	if expired == nil {
		panic("acker: Tick with a nil expired callback")
	}
	t.cur++
	if int(t.cur) == len(t.counts) {
		t.cur = 0
	}
	b := t.cur
	c := t.counts[b]
	if c == 0 {
		return
	}
	t.ticking = true
	defer func() { t.ticking = false }()
	if c >= t.bulkMin && c >= t.tab.n/16 {
		t.expireBulk(b, expired)
		return
	}
	// The oldest bucket became the newest; what is still in it expires.
	// remove moves the last entry into the hole, so e is examined again.
	for e := 0; e < t.tab.n && t.counts[b] > 0; {
		p, j := t.tab.at(e)
		if p.meta[j]&bucketMask != b {
			e++
			continue
		}
		o := Outcome{Root: RootID(p.root[j]), SpoutTask: p.task[j], Status: TimedOut}
		t.counts[b]--
		t.tab.remove(e, t.tab.slotOf(e))
		expired(o)
	}
}

// expireBulk expires bucket b in one pass that compacts the survivors to
// the front of the slab, then rebuilds the index: cheaper than removing
// entries one by one when many expire. Len reports the count after the
// Tick from the first callback on. If expired panics, the entries not yet
// reported are kept, in bucket b.
func (t *Tracker) expireBulk(b uint16, expired func(Outcome)) {
	tb := &t.tab
	n, e, w := tb.n, 0, 0
	keep := func(e int) {
		if w != e {
			p, j := tb.at(e)
			q, k := tb.at(w)
			q.root[k], q.val[k], q.task[k], q.meta[k] = p.root[j], p.val[j], p.task[j], p.meta[j]
		}
		w++
	}
	defer func() {
		for ; e < n; e++ { // after a panic in expired
			keep(e)
		}
		tb.compacted(w)
	}()
	tb.n = n - t.counts[b]
	for e < n {
		p, j := tb.at(e)
		if p.meta[j]&bucketMask != b {
			keep(e)
			e++
			continue
		}
		o := Outcome{Root: RootID(p.root[j]), SpoutTask: p.task[j], Status: TimedOut}
		e++
		t.counts[b]--
		expired(o)
	}
}

// Len returns the number of roots tracked, including roots whose init has
// not arrived and roots recreated by messages that came after their tree
// was done.
func (t *Tracker) Len() int { return t.tab.n }

// Footprint returns the heap bytes held by the pending table (slab pages
// and index), for metrics. It grows in steps and shrinks as trees finish.
func (t *Tracker) Footprint() int { return t.tab.footprint() + len(t.counts)*8 }

// enter guards against use from inside Tick's callback, which would
// disturb the scan.
func (t *Tracker) enter() {
	if t.ticking {
		panic("acker: Tracker used from inside a Tick callback")
	}
}

// upsert returns the entry for root, creating it in the newest bucket when
// absent, with its index slot and location.
func (t *Tracker) upsert(root RootID) (e, pos int, p *page, j int) {
	t.enter()
	e, pos, disp := t.tab.find(root)
	if e < 0 {
		e, pos = t.tab.insert(root, pos, disp, t.cur)
		t.counts[t.cur]++
	}
	p, j = t.tab.at(e)
	return e, pos, p, j
}

// touch moves the entry at p[j] to the newest bucket.
func (t *Tracker) touch(p *page, j int) {
	m := p.meta[j]
	if b := m & bucketMask; b != t.cur {
		t.counts[b]--
		t.counts[t.cur]++
		p.meta[j] = m&^bucketMask | t.cur
	}
}

// settle decides the entry's status after a message and removes it when
// the tree is done. A recorded fail wins over a zero value: the two meet
// only when a fail came before the init, and failing (and so replaying) is
// the safe side.
func (t *Tracker) settle(e, pos int, p *page, j int) Outcome {
	m := p.meta[j]
	o := Outcome{Root: RootID(p.root[j]), SpoutTask: p.task[j], Status: Pending}
	if m&flagInit == 0 {
		return o
	}
	switch {
	case m&flagFailed != 0:
		o.Status = Failed
	case p.val[j] == 0:
		o.Status = Completed
	default:
		return o
	}
	t.counts[m&bucketMask]--
	t.tab.remove(e, pos)
	return o
}
