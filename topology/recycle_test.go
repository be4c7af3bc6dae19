package topology

import (
	"testing"
	"testing/synctest"
)

// keeper keeps the *Tuple of every input, as a bolt that acks later does.
type keeper struct {
	funcBolt
	kept []*Tuple
}

// borrower is a bolt that promises not to keep its inputs.
type borrower struct{ funcBolt }

func (*borrower) BorrowsTuples() {}

// recyclingTopology runs n tuples from a feed through a sink made by
// newSink, in batches of 4, and returns the topology still running.
func recyclingTopology(t *testing.T, n int, newSink func() Bolt) *Running {
	f := newFeed()
	b := NewBuilder()
	b.Spout("feed", f.newSpout).Output("v")
	b.Bolt("sink", newSink).Input("feed", Shuffle())
	cfg := DefaultConfig()
	cfg.BatchSize = 4
	r := submit(t, mustBuild(t, b), cfg)
	for i := range n {
		f.add(i, i)
	}
	settle()
	if a, _ := f.counts(); a != n {
		t.Fatalf("%d of %d trees acked", a, n)
	}
	return r
}

// givenBack returns how many emptied batches wait on the free channel of
// component comp's executor.
func givenBack(r *Running, kind execKind, comp string) int {
	r.mu.Lock()
	w := r.worker
	r.mu.Unlock()
	for i, e := range w.plan.execs {
		if e.kind == kind && e.name() == comp {
			switch kind {
			case boltExec:
				return len(w.boltFree[i])
			case ackerExec:
				return len(w.ackerFree[i])
			default:
				return len(w.spoutFree[i])
			}
		}
	}
	panic("no executor of " + comp)
}

// TestKeptTuplesAreNeverOverwritten: an ordinary bolt may keep the *Tuple
// it is passed; its executor must not reuse the batch behind it.
func TestKeptTuplesAreNeverOverwritten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k := &keeper{}
		k.f = func(out *OutputCollector, tu *Tuple) {
			k.kept = append(k.kept, tu)
			out.Ack(tu)
		}
		const n = 200
		r := recyclingTopology(t, n, func() Bolt { return k })
		for i, tu := range k.kept {
			if tu.Value(0) != i {
				t.Fatalf("kept tuple %d now holds %v: its batch was reused", i, tu.Value(0))
			}
		}
		if len(k.kept) != n {
			t.Fatalf("kept %d tuples; want %d", len(k.kept), n)
		}
		if got := givenBack(r, boltExec, "sink"); got != 0 {
			t.Fatalf("%d batches of an ordinary bolt's executor were given back", got)
		}
		stop(t, r)
	})
}

// TestBorrowersAckersAndSpoutsRecycleBatches: the executors of a Borrower,
// of the ackers and of the spouts give emptied batches back.
func TestBorrowersAckersAndSpoutsRecycleBatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &borrower{funcBolt{f: ackAll}}
		r := recyclingTopology(t, 200, func() Bolt { return b })
		for _, c := range []struct {
			kind execKind
			comp string
		}{{boltExec, "sink"}, {ackerExec, ackerComponent}, {spoutExec, "feed"}} {
			if got := givenBack(r, c.kind, c.comp); got == 0 {
				t.Errorf("%s's executor gave no batch back", c.comp)
			}
		}
		stop(t, r)
	})
}
