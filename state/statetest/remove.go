package statetest

import (
	"context"
	"errors"
	"testing"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/nontransactional"
	"github.com/squallstream/squall/state/opaque"
	"github.com/squallstream/squall/state/transactional"
	"github.com/squallstream/squall/txn"
)

// Step is one step of a removal table: Op on Key at the current txid, and
// the expected result.
type Step struct {
	Op  StepOp
	Key string
	// N is the amount of an add or the value of a put.
	N int64
	// Want is the value an add returns or a get reads; Absent says a get
	// reads the key as absent.
	Want   int64
	Absent bool
	// TxID is the batch a begin starts.
	TxID txn.TxID
}

// StepOp is what a Step does.
type StepOp uint8

// Steps of a removal table.
const (
	StepBegin  StepOp = iota + 1 // BeginCommit(TxID)
	StepCommit                   // Commit of the current txid
	StepGet                      // MultiGet(Key): Want, or Absent
	StepAdd                      // MultiUpdate(Key, +N): returns Want
	StepPut                      // MultiPut(Key, N)
	StepRemove                   // MultiRemove(Key)
	StepStored                   // the backing map holds Key (a value or a tombstone), or not (Absent)
)

func (o StepOp) String() string {
	return [...]string{"?", "begin", "commit", "get", "add", "put", "remove", "stored"}[min(int(o), 7)]
}

// OpaqueRemoveTable is Storm's state test test-memory-map-state-remove
// (MemoryMapState, an OpaqueMap: multiRemove writes a null curr, and a
// replay of the removing txid reads the value before it), followed by the
// replay cases of opaque removal:
//
//	txid 1:        put a 1, put b 2; commit
//	txid 2:        remove a; get a → absent; get b → 2; commit
//	replay txid 2: get a → 1 (prev); get b → 2; remove a; commit
//	txid 3:        get a → absent; get b → 2; commit (Storm's test ends here)
//	txid 4:        b +3 → 5; remove b; get b → absent; b +1 → 1 (from absent); remove b; commit
//	replay txid 4: get b → 2 (prev); b +3 → 5; remove b; commit
//	txid 5:        get b → absent; b +7 → 7 (a fresh value); commit
//	txid 6:        remove b; commit
//	replay txid 6: get b → 7 (prev); b +1 → 8 (this attempt does not remove); commit
//	txid 7:        get b → 8; remove c (never written); get c → absent; commit
//	txid 8:        remove b; put b 9 (removed, then written again); commit
//	txid 9:        get b → 9; commit
//
// StepStored steps check that the tombstones of a txid are deleted from a
// backing map that can delete when a later txid begins, and kept before.
var OpaqueRemoveTable = []Step{
	{Op: StepBegin, TxID: 1}, {Op: StepPut, Key: "a", N: 1}, {Op: StepPut, Key: "b", N: 2}, {Op: StepCommit},
	{Op: StepBegin, TxID: 2}, {Op: StepRemove, Key: "a"}, {Op: StepGet, Key: "a", Absent: true}, {Op: StepGet, Key: "b", Want: 2}, {Op: StepCommit},
	{Op: StepStored, Key: "a"}, // the tombstone, needed by a replay of txid 2
	{Op: StepBegin, TxID: 2}, {Op: StepGet, Key: "a", Want: 1}, {Op: StepGet, Key: "b", Want: 2}, {Op: StepRemove, Key: "a"}, {Op: StepCommit},
	{Op: StepBegin, TxID: 3}, {Op: StepStored, Key: "a", Absent: true}, {Op: StepGet, Key: "a", Absent: true}, {Op: StepGet, Key: "b", Want: 2}, {Op: StepCommit},
	{Op: StepBegin, TxID: 4}, {Op: StepAdd, Key: "b", N: 3, Want: 5}, {Op: StepRemove, Key: "b"}, {Op: StepGet, Key: "b", Absent: true},
	{Op: StepAdd, Key: "b", N: 1, Want: 1}, {Op: StepRemove, Key: "b"}, {Op: StepCommit},
	{Op: StepBegin, TxID: 4}, {Op: StepGet, Key: "b", Want: 2}, {Op: StepAdd, Key: "b", N: 3, Want: 5}, {Op: StepRemove, Key: "b"}, {Op: StepCommit},
	{Op: StepBegin, TxID: 5}, {Op: StepGet, Key: "b", Absent: true}, {Op: StepAdd, Key: "b", N: 7, Want: 7}, {Op: StepCommit},
	{Op: StepBegin, TxID: 6}, {Op: StepRemove, Key: "b"}, {Op: StepCommit},
	{Op: StepBegin, TxID: 6}, {Op: StepGet, Key: "b", Want: 7}, {Op: StepAdd, Key: "b", N: 1, Want: 8}, {Op: StepCommit},
	{Op: StepBegin, TxID: 7}, {Op: StepStored, Key: "b"}, {Op: StepGet, Key: "b", Want: 8},
	{Op: StepRemove, Key: "c"}, {Op: StepGet, Key: "c", Absent: true}, {Op: StepCommit},
	{Op: StepBegin, TxID: 8}, {Op: StepRemove, Key: "b"}, {Op: StepPut, Key: "b", N: 9}, {Op: StepCommit},
	{Op: StepBegin, TxID: 9}, {Op: StepGet, Key: "b", Want: 9}, {Op: StepCommit},
	{Op: StepGet, Key: "a", Absent: true}, {Op: StepGet, Key: "b", Want: 9}, {Op: StepGet, Key: "c", Absent: true},
}

// TransactionalRemoveTable is Storm's removal test over a transactional
// map (TransactionalMap stores {T, null}): a replay of a txid has the
// content of its first attempt, so its removals and updates are already
// applied and change nothing.
//
//	txid 1:        a +1 → 1; b +2 → 2; commit
//	txid 2:        a +1 → 2; remove a; get a → absent; get b → 2; commit
//	replay txid 2: get a → absent; a +1 skipped (→ absent, zero); remove a; commit
//	txid 3:        get a → absent; a +5 → 5 (a fresh value); commit
//	txid 4:        remove a; a +1 → 1 (from absent); commit
//	replay txid 4: get a → 1; remove a; a +1 → 1; commit
//	txid 5:        get a → 1; get b → 2; commit
var TransactionalRemoveTable = []Step{
	{Op: StepBegin, TxID: 1}, {Op: StepAdd, Key: "a", N: 1, Want: 1}, {Op: StepAdd, Key: "b", N: 2, Want: 2}, {Op: StepCommit},
	{Op: StepBegin, TxID: 2}, {Op: StepAdd, Key: "a", N: 1, Want: 2}, {Op: StepRemove, Key: "a"}, {Op: StepGet, Key: "a", Absent: true},
	{Op: StepGet, Key: "b", Want: 2}, {Op: StepCommit},
	{Op: StepStored, Key: "a"},
	{Op: StepBegin, TxID: 2}, {Op: StepGet, Key: "a", Absent: true}, {Op: StepAdd, Key: "a", N: 1, Want: 0}, {Op: StepRemove, Key: "a"}, {Op: StepCommit},
	{Op: StepBegin, TxID: 3}, {Op: StepStored, Key: "a", Absent: true}, {Op: StepGet, Key: "a", Absent: true}, {Op: StepAdd, Key: "a", N: 5, Want: 5}, {Op: StepCommit},
	{Op: StepBegin, TxID: 4}, {Op: StepRemove, Key: "a"}, {Op: StepAdd, Key: "a", N: 1, Want: 1}, {Op: StepCommit},
	{Op: StepBegin, TxID: 4}, {Op: StepGet, Key: "a", Want: 1}, {Op: StepRemove, Key: "a"}, {Op: StepAdd, Key: "a", N: 1, Want: 1}, {Op: StepCommit},
	{Op: StepBegin, TxID: 5}, {Op: StepStored, Key: "a"}, {Op: StepGet, Key: "a", Want: 1}, {Op: StepGet, Key: "b", Want: 2}, {Op: StepCommit},
}

// NonTransactionalRemoveTable removes keys from a non-transactional map:
// the removal is immediate and a replay removes again (at-least-once).
//
//	txid 1:        a +1 → 1; b +2 → 2; remove a; get a → absent; commit
//	replay txid 1: get a → absent; a +1 → 1; remove a; commit
//	txid 2:        get a → absent; get b → 2; remove b; b +3 → 3; commit
var NonTransactionalRemoveTable = []Step{
	{Op: StepBegin, TxID: 1}, {Op: StepAdd, Key: "a", N: 1, Want: 1}, {Op: StepAdd, Key: "b", N: 2, Want: 2},
	{Op: StepRemove, Key: "a"}, {Op: StepGet, Key: "a", Absent: true}, {Op: StepCommit},
	{Op: StepBegin, TxID: 1}, {Op: StepGet, Key: "a", Absent: true}, {Op: StepAdd, Key: "a", N: 1, Want: 1}, {Op: StepRemove, Key: "a"}, {Op: StepCommit},
	{Op: StepBegin, TxID: 2}, {Op: StepGet, Key: "a", Absent: true}, {Op: StepGet, Key: "b", Want: 2},
	{Op: StepRemove, Key: "b"}, {Op: StepAdd, Key: "b", N: 3, Want: 3}, {Op: StepCommit},
}

// RunRemoveTable runs steps over m, a removable map state over the backing
// map b. StepStored steps are checked only when b can delete: otherwise
// tombstones stay, and they read as absent.
func RunRemoveTable(t *testing.T, m state.RemovableMapState[int64], b state.BackingMap[[]byte], steps []Step) {
	t.Helper()
	ctx := context.Background()
	var tx txn.TxID
	deletes := state.CanDelete(b)
	for i, s := range steps {
		key := []state.Key{state.MustKey(s.Key)}
		var err error
		switch s.Op {
		case StepBegin:
			tx = s.TxID
			err = m.BeginCommit(ctx, tx)
		case StepCommit:
			err = m.Commit(ctx, tx)
		case StepGet:
			var es []state.Entry[int64]
			if es, err = m.MultiGet(ctx, key); err == nil {
				if es[0].Found == s.Absent || (!s.Absent && es[0].Val != s.Want) {
					t.Errorf("step %d (txid %v): get %s = %+v, want %v (absent %v)", i, tx, s.Key, es[0], s.Want, s.Absent)
				}
			}
		case StepAdd:
			var vs []int64
			if vs, err = m.MultiUpdate(ctx, key, []state.ValueUpdater[int64]{Add(s.N)}); err == nil && vs[0] != s.Want {
				t.Errorf("step %d (txid %v): %s +%d = %d, want %d", i, tx, s.Key, s.N, vs[0], s.Want)
			}
		case StepPut:
			err = m.MultiPut(ctx, key, []int64{s.N})
		case StepRemove:
			err = m.MultiRemove(ctx, key)
		case StepStored:
			if !deletes {
				continue
			}
			var es []state.Entry[[]byte]
			if es, err = b.MultiGet(ctx, key); err == nil && es[0].Found == s.Absent {
				t.Errorf("step %d (txid %v): %s stored = %v, want %v", i, tx, s.Key, es[0].Found, !s.Absent)
			}
		}
		if err != nil {
			t.Fatalf("step %d (txid %v): %v %s: %v", i, tx, s.Op, s.Key, err)
		}
	}
}

// TestOpaqueRemoveTable runs OpaqueRemoveTable over an opaque map on m,
// which must be empty.
func TestOpaqueRemoveTable(t *testing.T, m state.BackingMap[[]byte]) {
	t.Helper()
	RunRemoveTable(t, opaque.New(m, state.MapOptions[int64]{}), m, OpaqueRemoveTable)
}

// TestTransactionalRemoveTable runs TransactionalRemoveTable over a
// transactional map on m, which must be empty.
func TestTransactionalRemoveTable(t *testing.T, m state.BackingMap[[]byte]) {
	t.Helper()
	RunRemoveTable(t, transactional.New(m, state.MapOptions[int64]{}), m, TransactionalRemoveTable)
}

// TestNonTransactionalRemoveTable runs NonTransactionalRemoveTable over a
// non-transactional map on m, which must be empty, then checks that the
// removed keys are gone from m if it can delete.
func TestNonTransactionalRemoveTable(t *testing.T, m state.BackingMap[[]byte]) {
	t.Helper()
	RunRemoveTable(t, nontransactional.New(m, state.MapOptions[int64]{}), m, append(NonTransactionalRemoveTable,
		Step{Op: StepStored, Key: "a", Absent: true}))
}

// testDelete checks the Deleter contract, if m can delete.
func testDelete(t *testing.T, m state.BackingMap[[]byte]) {
	if !state.CanDelete(m) {
		t.Skip("the map cannot delete")
	}
	d := m.(state.Deleter)
	ctx := context.Background()
	put(t, m, keysOf("a", "b", "c"), []byte("1"), []byte("2"), []byte("3"))
	if err := d.MultiDelete(ctx, nil); err != nil {
		t.Fatalf("MultiDelete of no keys: %v", err)
	}
	if err := d.MultiDelete(ctx, keysOf("a", "never", "a", "c")); err != nil {
		t.Fatalf("MultiDelete: %v", err)
	}
	es := get(t, m, keysOf("a", "b", "c", "never")...)
	expect(t, "deleted", es[0], nil, false)
	expect(t, "kept", es[1], []byte("2"), true)
	expect(t, "deleted last", es[2], nil, false)
	expect(t, "never written", es[3], nil, false)
	// A deleted key can be written again.
	put(t, m, keysOf("a"), []byte("again"))
	expect(t, "written again", get(t, m, keysOf("a")...)[0], []byte("again"), true)

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := d.MultiDelete(cctx, keysOf("b")); !errors.Is(err, context.Canceled) || !failure.IsRetryable(err) {
		t.Errorf("MultiDelete with a cancelled context: %v, want a retryable error wrapping context.Canceled", err)
	}
	expect(t, "after cancelled delete", get(t, m, keysOf("b")...)[0], []byte("2"), true)
}
