package cassandra_test

import (
	"context"
	"testing"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/cassandra"
	"github.com/squallstream/squall/state/cassandra/cassandratest"
	"github.com/squallstream/squall/state/opaque"
	"github.com/squallstream/squall/txn"
)

// heldPuts is a backing map whose writes are held back instead of sent:
// the writes of a worker that stalled (a long pause, a partition) and is
// presumed dead. deliver sends them late.
type heldPuts struct {
	state.BackingMap[[]byte]
	keys [][]state.Key
	vals [][][]byte
}

func (h *heldPuts) MultiPut(_ context.Context, keys []state.Key, vals [][]byte) error {
	h.keys, h.vals = append(h.keys, keys), append(h.vals, vals)
	return nil
}

func (h *heldPuts) deliver(t *testing.T) {
	t.Helper()
	for i := range h.keys {
		if err := h.BackingMap.MultiPut(t.Context(), h.keys[i], h.vals[i]); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFencingStaleWriterLoses runs two writers over one opaque table, two
// workers of one owner generation. The old worker applies batch 2 but its
// writes are delayed; it is presumed dead, a new worker opens the table,
// replays batch 2 and commits batch 3; then the old worker's writes of
// batch 2 arrive. They must not win: the counts are those of the new
// worker's commits. (Without fencing the late writes would replace batch
// 3's values with batch 2's, and the next batch would count from there.)
func TestFencingStaleWriterLoses(t *testing.T) {
	ctx := t.Context()
	s := cassandratest.Session(t)
	table, err := s.EnsureTable(ctx, cassandra.TableSpec{Name: cassandratest.Table(t), Layout: cassandra.Opaque,
		Keys: []cassandra.Column{{Name: "word", Type: "text"}}, Values: cassandra.Typed[int64]("bigint")})
	if err != nil {
		t.Fatal(err)
	}
	open := func() *cassandra.Map { // a worker of the owner's one generation
		m, err := table.Open(ownedBy(ctx, 1))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	keys := []state.Key{state.MustKey("the"), state.MustKey("cow")}
	apply := func(m state.MapState[int64], txid txn.TxID, n int64, keys ...state.Key) {
		t.Helper()
		if err := m.BeginCommit(ctx, txid); err != nil {
			t.Fatal(err)
		}
		ups := make([]state.ValueUpdater[int64], len(keys))
		for i := range ups {
			ups[i] = state.ValueUpdaterFunc[int64](func(old int64, _ bool) int64 { return old + n })
		}
		if _, err := m.MultiUpdate(ctx, keys, ups); err != nil {
			t.Fatal(err)
		}
		if err := m.Commit(ctx, txid); err != nil {
			t.Fatal(err)
		}
	}

	oldB := open()
	old := opaque.New[int64](oldB, state.MapOptions[int64]{})
	apply(old, 1, 10, keys...) // committed: the=10 cow=10

	stalled := &heldPuts{BackingMap: oldB}
	oldStalled := opaque.New[int64](stalled, state.MapOptions[int64]{})
	apply(oldStalled, 2, 100, keys...) // computed 110, not yet arrived

	newB := open()
	if newB.Epoch() <= oldB.Epoch() {
		t.Fatalf("the new map's epoch %d is not above the old one's %d", newB.Epoch(), oldB.Epoch())
	}
	cur := opaque.New[int64](newB, state.MapOptions[int64]{})
	apply(cur, 2, 1, keys...) // the replay of 2: 11
	apply(cur, 3, 1, keys[0]) // the=12, cow stays 11 at txid 2

	stalled.deliver(t) // the old worker's batch 2 arrives late

	check := func(when string, want map[string]int64) {
		t.Helper()
		fresh := opaque.New[int64](open(), state.MapOptions[int64]{})
		es, err := fresh.MultiGet(ctx, keys)
		if err != nil {
			t.Fatal(err)
		}
		for i, k := range keys {
			w := want[k.Values()[0].(string)]
			if !es[i].Found || es[i].Val != w {
				t.Errorf("%s: %v = %+v, want %d", when, k, es[i], w)
			}
		}
	}
	check("after the stale writes", map[string]int64{"the": 12, "cow": 11})

	// The new worker goes on from its own values.
	apply(cur, 4, 1, keys...)
	check("after batch 4", map[string]int64{"the": 13, "cow": 12})
}
