package statetest

import (
	"context"
	"testing"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/nontransactional"
	"github.com/squallstream/squall/state/opaque"
	"github.com/squallstream/squall/state/transactional"
	"github.com/squallstream/squall/txn"
)

// Add returns an updater adding n to a count (Storm's CountUpdater in
// StateTest): n for an absent key, old+n otherwise.
func Add(n int64) state.ValueUpdater[int64] {
	return state.ValueUpdaterFunc[int64](func(old int64, found bool) int64 {
		if !found {
			return n
		}
		return old + n
	})
}

// driver runs single-key steps of a table and fails t on any error.
type driver struct {
	t   *testing.T
	ctx context.Context
	m   state.MapState[int64]
	key state.Key
}

func (d driver) begin(tx txn.TxID) {
	d.t.Helper()
	if err := d.m.BeginCommit(d.ctx, tx); err != nil {
		d.t.Fatalf("BeginCommit(%v): %v", tx, err)
	}
}

func (d driver) commit(tx txn.TxID) {
	d.t.Helper()
	if err := d.m.Commit(d.ctx, tx); err != nil {
		d.t.Fatalf("Commit(%v): %v", tx, err)
	}
}

// get checks that the key reads as want, or as absent when absent.
func (d driver) get(step string, want int64, absent bool) {
	d.t.Helper()
	es, err := d.m.MultiGet(d.ctx, []state.Key{d.key})
	if err != nil {
		d.t.Fatalf("%s: MultiGet: %v", step, err)
	}
	switch {
	case absent && es[0].Found:
		d.t.Errorf("%s: get = %d, want absent", step, es[0].Val)
	case !absent && !es[0].Found:
		d.t.Errorf("%s: get = absent, want %d", step, want)
	case !absent && es[0].Val != want:
		d.t.Errorf("%s: get = %d, want %d", step, es[0].Val, want)
	}
}

// add applies +n and checks the returned new value.
func (d driver) add(step string, n, want int64) {
	d.t.Helper()
	vs, err := d.m.MultiUpdate(d.ctx, []state.Key{d.key}, []state.ValueUpdater[int64]{Add(n)})
	if err != nil {
		d.t.Fatalf("%s: MultiUpdate(+%d): %v", step, n, err)
	}
	if vs[0] != want {
		d.t.Errorf("%s: +%d = %d, want %d", step, n, vs[0], want)
	}
}

// TestOpaqueMapTable runs Storm's StateTest.testOpaqueMap over an opaque
// map on m, which must be empty:
//
//	txid 1:        get a → absent; +1 → 1; get → 1; +2 → 3; commit
//	replay txid 1: get a → absent (prev); +2 → 2; commit
//	txid 2:        get → 2; +3 → 5; +1 → 6; commit
func TestOpaqueMapTable(t *testing.T, m state.BackingMap[[]byte]) {
	t.Helper()
	d := driver{t: t, ctx: context.Background(), m: opaque.New(m, state.MapOptions[int64]{}), key: state.MustKey("a")}

	d.begin(1)
	d.get("txid 1", 0, true)
	d.add("txid 1", 1, 1)
	d.get("txid 1", 1, false)
	d.add("txid 1", 2, 3)
	d.commit(1)

	d.begin(1)
	d.get("replay txid 1", 0, true)
	d.add("replay txid 1", 2, 2)
	d.commit(1)

	d.begin(2)
	d.get("txid 2", 2, false)
	d.add("txid 2", 3, 5)
	d.add("txid 2", 1, 6)
	d.commit(2)

	d.get("after txid 2", 6, false)
}

// TestTransactionalMapTable runs Storm's StateTest.testTransactionalMap
// over a transactional map on m, which must be empty:
//
//	txid 1:        +1 → 1; +2 → 3; commit
//	replay txid 1: get → 3; +1 → 3; +2 → 3 (both skipped); commit
//	txid 2:        get → 3; +3 → 6; +1 → 7; commit
func TestTransactionalMapTable(t *testing.T, m state.BackingMap[[]byte]) {
	t.Helper()
	d := driver{t: t, ctx: context.Background(), m: transactional.New(m, state.MapOptions[int64]{}), key: state.MustKey("a")}

	d.begin(1)
	d.get("txid 1", 0, true)
	d.add("txid 1", 1, 1)
	d.add("txid 1", 2, 3)
	d.commit(1)

	d.begin(1)
	d.get("replay txid 1", 3, false)
	d.add("replay txid 1", 1, 3)
	d.add("replay txid 1", 2, 3)
	d.commit(1)

	d.begin(2)
	d.get("txid 2", 3, false)
	d.add("txid 2", 3, 6)
	d.add("txid 2", 1, 7)
	d.commit(2)

	d.get("after txid 2", 7, false)
}

// TestNonTransactionalMapTable runs the tables' steps over a
// non-transactional map on m, which must be empty, and checks that it is
// at-least-once: the replay of txid 1 counts again.
//
//	txid 1:        +1 → 1; +2 → 3; commit
//	replay txid 1: get → 3; +1 → 4; +2 → 6 (counted twice); commit
//	txid 2:        get → 6; +3 → 9
func TestNonTransactionalMapTable(t *testing.T, m state.BackingMap[[]byte]) {
	t.Helper()
	d := driver{t: t, ctx: context.Background(), m: nontransactional.New(m, state.MapOptions[int64]{}), key: state.MustKey("a")}

	d.begin(1)
	d.get("txid 1", 0, true)
	d.add("txid 1", 1, 1)
	d.add("txid 1", 2, 3)
	d.commit(1)

	d.begin(1)
	d.get("replay txid 1", 3, false)
	d.add("replay txid 1", 1, 4)
	d.add("replay txid 1", 2, 6)
	d.commit(1)

	d.begin(2)
	d.get("txid 2", 6, false)
	d.add("txid 2", 3, 9)
	d.commit(2)
}
