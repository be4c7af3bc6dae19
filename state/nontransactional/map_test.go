package nontransactional_test

import (
	"context"
	"errors"
	"testing"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/nontransactional"
	"github.com/squallstream/squall/state/statetest"
)

// The replay of txid 1 counts again: non-transactional state is
// at-least-once.
func TestMapStormTableCountsReplays(t *testing.T) {
	statetest.TestNonTransactionalMapTable(t, state.NewMemory(""))
}

func TestMapUpdatesOutsideCommit(t *testing.T) {
	ctx := context.Background()
	m := nontransactional.New(state.NewMemory(""), state.MapOptions[int64]{})
	k := []state.Key{state.MustKey("a"), state.MustKey("a")}
	vs, err := m.MultiUpdate(ctx, k, []state.ValueUpdater[int64]{statetest.Add(2), statetest.Add(3)})
	if err != nil || vs[0] != 2 || vs[1] != 5 {
		t.Errorf("MultiUpdate = %v, %v; want [2 5]", vs, err)
	}
	if err := m.MultiPut(ctx, k[:1], []int64{9}); err != nil {
		t.Fatal(err)
	}
	es, err := m.MultiGet(ctx, k)
	if err != nil || es[0].Val != 9 || es[1].Val != 9 {
		t.Errorf("MultiGet = %+v, %v", es, err)
	}
}

func TestMapStoresSmallEnvelope(t *testing.T) {
	ctx := context.Background()
	mem := state.NewMemory("")
	m := nontransactional.New(mem, state.MapOptions[int64]{})
	k := []state.Key{state.MustKey("a")}
	m.MultiPut(ctx, k, []int64{7})
	es, _ := mem.MultiGet(ctx, k)
	if want := []byte{0x92, 0x31, 0x07}; string(es[0].Val) != string(want) {
		t.Errorf("stored %x, want %x", es[0].Val, want)
	}
}

func TestMapUndecodableValue(t *testing.T) {
	ctx := context.Background()
	mem := state.NewMemory("")
	bad := []state.Key{state.MustKey("bad")}
	mem.MultiPut(ctx, bad, [][]byte{[]byte("nope")})
	m := nontransactional.New(mem, state.MapOptions[int64]{})
	_, err := m.MultiUpdate(ctx, bad, []state.ValueUpdater[int64]{statetest.Add(1)})
	if !errors.Is(err, state.ErrCorrupt) || !failure.IsReported(err) {
		t.Errorf("MultiUpdate: %v, want a reported ErrCorrupt", err)
	}
}
