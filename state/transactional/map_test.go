package transactional_test

import (
	"context"
	"errors"
	"testing"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/statetest"
	"github.com/squallstream/squall/state/transactional"
)

func TestMapStormTable(t *testing.T) {
	statetest.TestTransactionalMapTable(t, state.NewMemory(""))
}

func TestMapStormTableOverLRU(t *testing.T) {
	l, err := state.NewLRU[[]byte](state.NewMemory(""), 1)
	if err != nil {
		t.Fatal(err)
	}
	statetest.TestTransactionalMapTable(t, l)
}

func TestMapModel(t *testing.T) {
	statetest.TestTransactionalModel(t, state.NewMemory(""))
}

func TestMapWritesOnlyChangedKeys(t *testing.T) {
	ctx := context.Background()
	fm := statetest.NewFaultMap[[]byte](state.NewMemory(""), nil)
	m := transactional.New(fm, state.MapOptions[int64]{})
	a, b := state.MustKey("a"), state.MustKey("b")

	m.BeginCommit(ctx, 1)
	m.MultiUpdate(ctx, []state.Key{a}, []state.ValueUpdater[int64]{statetest.Add(1)})
	m.Commit(ctx, 1)

	// Replay of txid 1 touching a (applied before: skipped) and b (new).
	m.BeginCommit(ctx, 1)
	var putKeys []state.Key
	fm.SetRule(func(op statetest.Op, _ int, keys []state.Key) statetest.Fault {
		if op == statetest.OpPut {
			putKeys = keys
		}
		return statetest.Fault{}
	})
	vs, err := m.MultiUpdate(ctx, []state.Key{a, b}, []state.ValueUpdater[int64]{statetest.Add(1), statetest.Add(5)})
	if err != nil {
		t.Fatal(err)
	}
	if vs[0] != 1 || vs[1] != 5 {
		t.Errorf("replay = %v, want [1 5]", vs)
	}
	if len(putKeys) != 1 || !putKeys[0].Equal(b) {
		t.Errorf("replay wrote %v, want only [b]", putKeys)
	}
	// Replay with only skipped keys writes nothing.
	puts := fm.Calls(statetest.OpPut)
	m.BeginCommit(ctx, 1)
	if _, err := m.MultiUpdate(ctx, []state.Key{a}, []state.ValueUpdater[int64]{statetest.Add(1)}); err != nil {
		t.Fatal(err)
	}
	if fm.Calls(statetest.OpPut) != puts {
		t.Error("a fully skipped update wrote to the store")
	}
}

func TestMapPutAndGet(t *testing.T) {
	ctx := context.Background()
	m := transactional.New(state.NewMemory(""), state.MapOptions[string]{})
	k := []state.Key{state.MustKey("a")}
	if err := m.MultiPut(ctx, k, []string{"x"}); !errors.Is(err, state.ErrNoTxID) {
		t.Errorf("MultiPut outside a commit: %v", err)
	}
	m.BeginCommit(ctx, 1)
	if err := m.MultiPut(ctx, k, []string{"x"}); err != nil {
		t.Fatal(err)
	}
	m.Commit(ctx, 1)
	m.BeginCommit(ctx, 1)
	// MultiPut writes unconditionally, even in a replay.
	if err := m.MultiPut(ctx, k, []string{"y"}); err != nil {
		t.Fatal(err)
	}
	m.Commit(ctx, 1)
	es, err := m.MultiGet(ctx, k)
	if err != nil || es[0].Val != "y" {
		t.Errorf("MultiGet = %+v, %v", es, err)
	}
	if err := m.Commit(ctx, 1); !errors.Is(err, state.ErrNotBegun) {
		t.Errorf("Commit without BeginCommit: %v", err)
	}
}

func TestMapBehindIsFatal(t *testing.T) {
	ctx := context.Background()
	mem := state.NewMemory("")
	m := transactional.New(mem, state.MapOptions[int64]{})
	k := []state.Key{state.MustKey("a")}
	m.BeginCommit(ctx, 5)
	m.MultiUpdate(ctx, k, []state.ValueUpdater[int64]{statetest.Add(1)})
	m.Commit(ctx, 5)
	m.BeginCommit(ctx, 2)
	_, err := m.MultiUpdate(ctx, k, []state.ValueUpdater[int64]{statetest.Add(1)})
	var be *state.BehindError
	if !errors.As(err, &be) || be.Batch != 2 || be.Stored != 5 || failure.IsRetryable(err) {
		t.Errorf("MultiUpdate of txid 2 over txid 5: %v, want a fatal BehindError", err)
	}
}

func TestMapUndecodableValue(t *testing.T) {
	ctx := context.Background()
	mem := state.NewMemory("tx")
	bad := state.MustKey("bad")
	// An opaque envelope is not a transactional one.
	mem.MultiPut(ctx, []state.Key{bad}, [][]byte{{0x93, 0x11, 0x01, 0x05}})
	m := transactional.New(mem, state.MapOptions[int64]{})
	m.BeginCommit(ctx, 2)
	_, err := m.MultiUpdate(ctx, []state.Key{bad}, []state.ValueUpdater[int64]{statetest.Add(1)})
	var de *state.DecodeError
	if !errors.As(err, &de) || !de.Key.Equal(bad) || !failure.IsReported(err) {
		t.Errorf("MultiUpdate over an undecodable value: %v, want a reported DecodeError", err)
	}
	if _, err := m.MultiGet(ctx, []state.Key{bad}); !errors.Is(err, state.ErrCorrupt) {
		t.Errorf("MultiGet: %v, want ErrCorrupt", err)
	}
}

func TestMapStoresSmallEnvelope(t *testing.T) {
	ctx := context.Background()
	mem := state.NewMemory("")
	m := transactional.New(mem, state.MapOptions[int64]{})
	k := []state.Key{state.MustKey("a")}
	m.BeginCommit(ctx, 100)
	if err := m.MultiPut(ctx, k, []int64{120}); err != nil {
		t.Fatal(err)
	}
	es, _ := mem.MultiGet(ctx, k)
	if want := []byte{0x93, 0x21, 100, 120}; string(es[0].Val) != string(want) {
		t.Errorf("stored %x, want %x", es[0].Val, want)
	}
}
