package acker

import (
	"math/rand/v2"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// This file builds tuple trees with Storm's emit algorithm
// (SpoutOutputCollectorImpl.sendSpoutMsg, BoltOutputCollectorImpl.boltEmit,
// ack and fail), delivers the acker messages they produce in a random
// order, and checks the Tracker against what the trees say must happen.

type msgKind uint8

const (
	msgInit msgKind = iota
	msgAck
	msgFail
)

type message struct {
	kind msgKind
	root RootID
	xor  uint64
	task TaskID
}

// rootEdge is one entry of a tuple's anchors-to-ids map.
type rootEdge struct {
	root RootID
	id   uint64
}

type tuple struct {
	ids    []rootEdge // per root, the XOR of the edges into this tuple
	outAck uint64     // the XOR of the edges out of this tuple
}

// xorInto XORs id into the tuple's entry for root, keeping roots in the
// order first seen so that message order is reproducible.
func (tp *tuple) xorInto(root RootID, id uint64) {
	for i := range tp.ids {
		if tp.ids[i].root == root {
			tp.ids[i].id ^= id
			return
		}
	}
	tp.ids = append(tp.ids, rootEdge{root, id})
}

// rootFate is what the trees say about one root.
type rootFate struct {
	task       TaskID
	initSent   bool // the init message is delivered (not lost)
	hasFail    bool // some tuple of the tree failed
	unfinished bool // some tuple of the tree was neither acked nor failed
}

// forest is the generated topology run: messages and per-root fates.
type forest struct {
	msgs  []message
	roots []RootID
	fate  map[RootID]*rootFate
}

func genForest(t *rapid.T) *forest {
	// Edge ids come from a seeded PRNG, as in Storm: rapid's integers
	// favour small and repeated values, and equal edge ids cancel.
	rng := rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 0x5eed))
	f := &forest{fate: map[RootID]*rootFate{}}

	scheme := rapid.SampledFrom([]string{"random", "adjacent", "high bits"}).Draw(t, "root ids")
	base := rng.Uint64()
	var live []*tuple
	nroots := rapid.IntRange(1, 6).Draw(t, "roots")
	for i := range nroots {
		var root RootID
		switch scheme {
		case "random":
			root = RootID(rng.Uint64())
		case "adjacent":
			root = RootID(base + uint64(i))
		default:
			root = RootID(uint64(i+1)<<58 | base&0xff)
		}
		fate := &rootFate{task: TaskID(rapid.IntRange(0, 3).Draw(t, "spout task"))}
		f.roots = append(f.roots, root)
		f.fate[root] = fate
		// Spout emit: one edge per target task; the init carries their XOR.
		var initVal uint64
		for range rapid.IntRange(0, 3).Draw(t, "spout targets") {
			edge := rng.Uint64()
			initVal ^= edge
			live = append(live, &tuple{ids: []rootEdge{{root, edge}}})
		}
		fate.initSent = rapid.IntRange(0, 9).Draw(t, "init lost") != 0
		if fate.initSent {
			f.msgs = append(f.msgs, message{kind: msgInit, root: root, xor: initVal, task: fate.task})
		}
	}

	ack := func(in *tuple) {
		for _, re := range in.ids {
			f.msgs = append(f.msgs, message{kind: msgAck, root: re.root, xor: re.id ^ in.outAck})
		}
	}
	steps := rapid.IntRange(0, 40).Draw(t, "bolt steps")
	for range steps {
		if len(live) == 0 {
			break
		}
		k := rapid.IntRange(0, len(live)-1).Draw(t, "input")
		in := live[k]
		// Bolt emits anchored to the input and maybe to other live tuples
		// (multi-anchoring, across trees too) or to the input again
		// (self-anchoring).
		var children []*tuple
		for range rapid.IntRange(0, 2).Draw(t, "emits") {
			anchors := []*tuple{in}
			for range rapid.IntRange(0, 2).Draw(t, "extra anchors") {
				anchors = append(anchors, live[rapid.IntRange(0, len(live)-1).Draw(t, "anchor")])
			}
			for range rapid.IntRange(1, 2).Draw(t, "bolt targets") {
				child := &tuple{}
				for _, a := range anchors {
					edge := rng.Uint64()
					a.outAck ^= edge
					for _, re := range a.ids {
						child.xorInto(re.root, edge)
					}
				}
				children = append(children, child)
			}
		}
		live = append(live, children...)
		switch rapid.IntRange(0, 9).Draw(t, "input fate") {
		case 0: // fail: one fail per root
			for _, re := range in.ids {
				f.msgs = append(f.msgs, message{kind: msgFail, root: re.root})
				f.fate[re.root].hasFail = true
			}
		case 1: // hold: the bolt keeps the input and may emit on it again
			continue
		default:
			ack(in)
		}
		live = slices.Delete(live, k, k+1)
	}
	if rapid.Bool().Draw(t, "drain") {
		for _, in := range live {
			ack(in)
		}
		live = nil
	}
	for _, in := range live { // lost tuples: never acked or failed
		for _, re := range in.ids {
			f.fate[re.root].unfinished = true
		}
	}
	return f
}

// TestTupleTreesProperty checks, for random tuple trees and a random
// delivery order (acks and fails before the init included):
//   - a tree completes iff every one of its tuples was acked, and exactly at
//     its last message, never earlier;
//   - a tree with a failed tuple fails as soon as both the init and a fail
//     have arrived;
//   - the outcome names the spout task from the init;
//   - what is left times out on schedule: unfinished trees with their spout
//     task, trees whose init was lost and messages after a failure with
//     NoTask.
func TestTupleTreesProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := genForest(t)
		order := rapid.Permutation(f.msgs).Draw(t, "delivery order")
		buckets := rapid.IntRange(2, 4).Draw(t, "buckets")
		tr, err := New(Config{TimeoutBuckets: buckets})
		if err != nil {
			t.Fatal(err)
		}

		// Where each root's messages sit in the delivery order.
		first := map[RootID]int{}  // first message
		last := map[RootID]int{}   // last message
		initAt := map[RootID]int{} // the init
		failAt := map[RootID]int{} // the first fail
		for i, m := range order {
			if _, ok := first[m.root]; !ok {
				first[m.root] = i
			}
			last[m.root] = i
			switch m.kind {
			case msgInit:
				initAt[m.root] = i
			case msgFail:
				if _, ok := failAt[m.root]; !ok {
					failAt[m.root] = i
				}
			}
		}
		// Expected final outcomes by delivery position, and what stays.
		want := map[int]Outcome{}
		lingering := map[RootID]TaskID{}
		for _, r := range f.roots {
			fate := f.fate[r]
			if _, heard := first[r]; !heard {
				continue // no messages at all: the tracker never hears of it
			}
			switch {
			case !fate.initSent:
				lingering[r] = NoTask
			case fate.hasFail:
				at := max(initAt[r], failAt[r])
				want[at] = failed(r, fate.task)
				if last[r] > at { // later messages recreate the root
					lingering[r] = NoTask
				}
			case !fate.unfinished:
				want[last[r]] = completed(r, fate.task)
			default:
				lingering[r] = fate.task
			}
		}

		for i, m := range order {
			var got Outcome
			switch m.kind {
			case msgInit:
				got = tr.Init(m.root, m.xor, m.task)
			case msgAck:
				got = tr.Ack(m.root, m.xor)
			case msgFail:
				got = tr.Fail(m.root)
			}
			if got.Root != m.root {
				t.Fatalf("message %d for %v reported root %v", i, m.root, got.Root)
			}
			w, final := want[i]
			switch {
			case final && got != w:
				t.Fatalf("message %d (kind %d): got %v, want %v", i, m.kind, got, w)
			case !final && got.Status != Pending:
				t.Fatalf("message %d (kind %d): got %v, want pending", i, m.kind, got)
			}
		}
		checkInvariants(t, tr)
		if tr.Len() != len(lingering) {
			t.Fatalf("Len() = %d after delivery, want %d", tr.Len(), len(lingering))
		}
		for i := 1; i < buckets; i++ {
			if got := tick(tr); len(got) != 0 {
				t.Fatalf("tick %d of %d expired %v", i, buckets, got)
			}
		}
		expired := map[RootID]TaskID{}
		for _, o := range tick(tr) {
			if o.Status != TimedOut {
				t.Fatalf("tick reported %v", o)
			}
			expired[o.Root] = o.SpoutTask
		}
		if len(expired) != len(lingering) {
			t.Fatalf("expired %v, want %v", expired, lingering)
		}
		for r, task := range lingering {
			if got, ok := expired[r]; !ok || got != task {
				t.Fatalf("root %v expired with task %v (%v), want %v", r, got, ok, task)
			}
		}
		if tr.Len() != 0 {
			t.Fatalf("Len() = %d after expiry", tr.Len())
		}
	})
}
