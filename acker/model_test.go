package acker

import (
	"maps"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// modelEntry is a pending root in the plain-map model of a Tracker.
type modelEntry struct {
	val    uint64
	task   TaskID
	init   bool
	failed bool
	put    int // the tick count when the entry was last put in the newest bucket
}

// model is the obvious implementation: a Go map and a tick counter.
type model struct {
	buckets int
	ticks   int
	m       map[RootID]*modelEntry
}

func (md *model) get(r RootID) *modelEntry {
	e := md.m[r]
	if e == nil {
		e = &modelEntry{task: NoTask, put: md.ticks}
		md.m[r] = e
	}
	return e
}

func (md *model) settle(r RootID) Outcome {
	e := md.m[r]
	o := Outcome{Root: r, SpoutTask: e.task, Status: Pending}
	if !e.init {
		return o
	}
	switch {
	case e.failed:
		o.Status = Failed
	case e.val == 0:
		o.Status = Completed
	default:
		return o
	}
	delete(md.m, r)
	return o
}

func (md *model) tick() []Outcome {
	md.ticks++
	var out []Outcome
	for r, e := range md.m {
		if md.ticks-e.put >= md.buckets {
			out = append(out, Outcome{Root: r, SpoutTask: e.task, Status: TimedOut})
			delete(md.m, r)
		}
	}
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

// TestTrackerMatchesModel runs random operation sequences against a
// Tracker and the map model, comparing every outcome, every expiry and Len,
// and checking the table's structure after each step.
func TestTrackerMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		buckets := rapid.IntRange(2, 5).Draw(t, "buckets")
		tr, err := New(Config{TimeoutBuckets: buckets, InitialCapacity: rapid.IntRange(0, 100).Draw(t, "capacity")})
		if err != nil {
			t.Fatal(err)
		}
		tr.bulkMin = rapid.SampledFrom([]int{1, 8, 1 << 30}).Draw(t, "bulk expiry from")
		md := &model{buckets: buckets, m: map[RootID]*modelEntry{}}

		// A pool of roots, small enough that ops hit the same roots again,
		// drawn from a scheme that stresses the hash.
		scheme := rapid.SampledFrom(slices.Sorted(maps.Keys(idSchemes))).Draw(t, "scheme")
		poolSize := rapid.IntRange(1, 300).Draw(t, "pool")
		pool := make([]RootID, poolSize)
		for i := range pool {
			pool[i] = idSchemes[scheme](i)
		}
		root := rapid.SampledFrom(pool)
		// Values from a small alphabet so that XORs cancel and trees complete.
		xorGen := rapid.SampledFrom([]uint64{0, 1, 2, 3, 1 << 63, 0xdead_beef_0000_0001})
		// Sometimes the value that brings the root to zero.
		closing := func(t *rapid.T, r RootID) uint64 {
			if e := md.m[r]; e != nil && rapid.Bool().Draw(t, "closing") {
				return e.val
			}
			return xorGen.Draw(t, "xor")
		}
		compare := func(t *rapid.T, what string, got, want Outcome) {
			if got != want {
				t.Fatalf("%s: got %v, want %v", what, got, want)
			}
		}

		actions := map[string]func(*rapid.T){
			"init": func(t *rapid.T) {
				r := root.Draw(t, "root")
				x := closing(t, r)
				task := TaskID(rapid.IntRange(0, 3).Draw(t, "task"))
				e := md.get(r)
				e.val ^= x
				e.task = task
				e.init = true
				e.put = md.ticks
				compare(t, "Init", tr.Init(r, x, task), md.settle(r))
			},
			"ack": func(t *rapid.T) {
				r := root.Draw(t, "root")
				x := closing(t, r)
				md.get(r).val ^= x
				compare(t, "Ack", tr.Ack(r, x), md.settle(r))
			},
			"fail": func(t *rapid.T) {
				r := root.Draw(t, "root")
				e := md.get(r)
				e.failed = true
				e.put = md.ticks
				compare(t, "Fail", tr.Fail(r), md.settle(r))
			},
			"reset": func(t *rapid.T) {
				r := root.Draw(t, "root")
				md.get(r).put = md.ticks
				compare(t, "ResetTimeout", tr.ResetTimeout(r), md.settle(r))
			},
			"tick": func(t *rapid.T) {
				got, want := tick(tr), md.tick()
				if !slices.Equal(got, want) {
					t.Fatalf("Tick expired %v, want %v", got, want)
				}
			},
		}
		// Longer runs than t.Repeat's default 30 steps, so that trees live
		// across several rotations.
		action := rapid.SampledFrom(slices.Sorted(maps.Keys(actions)))
		steps := rapid.IntRange(1, 1000).Draw(t, "steps")
		for range steps {
			actions[action.Draw(t, "action")](t)
			if tr.Len() != len(md.m) {
				t.Fatalf("Len() = %d, want %d", tr.Len(), len(md.m))
			}
			checkInvariants(t, tr)
		}
	})
}
