package opaque_test

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/opaque"
)

// sliceReducer folds inputs into a []int64 of length 1 by modifying the
// accumulator in place, the mistake the seed rule is about.
type sliceReducer struct{}

func (sliceReducer) Init() []int64 { return []int64{0} }
func (sliceReducer) Reduce(acc []int64, in int64) []int64 {
	acc[0] += in // in place
	return acc
}

// mapReducer counts inputs per name in a map, in place.
type mapReducer struct{}

func (mapReducer) Init() map[string]int64 { return map[string]int64{} }
func (mapReducer) Reduce(acc map[string]int64, in string) map[string]int64 {
	acc[in]++ // in place
	return acc
}

// The seed rule: an updater that modifies the value it is given must not
// modify prev. Each update receives a freshly decoded value and prev is
// kept as stored bytes, so prev stays intact through new batches, replays
// and repeated updates within one commit.
func TestMutatingReducerKeepsPrevSlice(t *testing.T) {
	ctx := context.Background()
	mem := state.NewMemory("")
	m := opaque.New(mem, state.MapOptions[[]int64]{})
	k := []state.Key{state.MustKey("k")}
	update := func(ins ...int64) []int64 {
		t.Helper()
		vs, err := m.MultiUpdate(ctx, k, []state.ValueUpdater[[]int64]{state.Reduce[[]int64, int64](sliceReducer{}, ins)})
		if err != nil {
			t.Fatal(err)
		}
		return vs[0]
	}
	stored := func() opaque.Value[[]int64] {
		t.Helper()
		es, _ := mem.MultiGet(ctx, k)
		v, err := opaque.Decode[[]int64](es[0].Val, nil)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}

	m.BeginCommit(ctx, 1)
	if got := update(1, 2); !slices.Equal(got, []int64{3}) {
		t.Fatalf("txid 1 = %v", got)
	}
	m.Commit(ctx, 1)

	m.BeginCommit(ctx, 2)
	if got := update(10); !slices.Equal(got, []int64{13}) {
		t.Fatalf("txid 2 = %v", got)
	}
	if got := update(100); !slices.Equal(got, []int64{113}) { // cached path
		t.Fatalf("txid 2, second update = %v", got)
	}
	m.Commit(ctx, 2)
	if v := stored(); !slices.Equal(v.Curr, []int64{113}) || !v.HasPrev || !slices.Equal(v.Prev, []int64{3}) {
		t.Fatalf("after txid 2: stored %+v, want curr [113] prev [3]", v)
	}

	// Replay of txid 2: the batch sees prev, intact.
	m.BeginCommit(ctx, 2)
	es, err := m.MultiGet(ctx, k)
	if err != nil || !slices.Equal(es[0].Val, []int64{3}) {
		t.Fatalf("replay of txid 2 reads %v, %v; want prev [3]", es, err)
	}
	if got := update(5); !slices.Equal(got, []int64{8}) {
		t.Fatalf("replay of txid 2 = %v, want [8]", got)
	}
	m.Commit(ctx, 2)
	if v := stored(); !slices.Equal(v.Curr, []int64{8}) || !slices.Equal(v.Prev, []int64{3}) {
		t.Fatalf("after the replay: stored %+v, want curr [8] prev [3]", v)
	}
}

func TestMutatingReducerKeepsPrevMap(t *testing.T) {
	ctx := context.Background()
	mem := state.NewMemory("")
	l, _ := state.NewLRU[[]byte](mem, 8) // shared cached bytes must not matter either
	m := opaque.New(l, state.MapOptions[map[string]int64]{})
	k := []state.Key{state.MustKey("room")}
	update := func(ins ...string) map[string]int64 {
		t.Helper()
		vs, err := m.MultiUpdate(ctx, k, []state.ValueUpdater[map[string]int64]{state.Reduce[map[string]int64, string](mapReducer{}, ins)})
		if err != nil {
			t.Fatal(err)
		}
		return vs[0]
	}

	m.BeginCommit(ctx, 1)
	first := update("ann", "bob")
	m.Commit(ctx, 1)

	m.BeginCommit(ctx, 2)
	second := update("ann")
	m.Commit(ctx, 2)
	if !maps.Equal(first, map[string]int64{"ann": 1, "bob": 1}) {
		t.Errorf("the value returned for txid 1 changed to %v", first)
	}
	if !maps.Equal(second, map[string]int64{"ann": 2, "bob": 1}) {
		t.Errorf("txid 2 = %v", second)
	}

	m.BeginCommit(ctx, 2) // replay
	es, err := m.MultiGet(ctx, k)
	if err != nil || !maps.Equal(es[0].Val, map[string]int64{"ann": 1, "bob": 1}) {
		t.Fatalf("replay reads %v, %v; want prev {ann:1 bob:1}", es, err)
	}
	es[0].Val["zed"] = 9 // modifying what MultiGet returned changes nothing either
	if got := update("cid"); !maps.Equal(got, map[string]int64{"ann": 1, "bob": 1, "cid": 1}) {
		t.Fatalf("replay = %v", got)
	}
	m.Commit(ctx, 2)

	raw, _ := mem.MultiGet(ctx, k)
	v, err := opaque.Decode[map[string]int64](raw[0].Val, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(v.Prev, map[string]int64{"ann": 1, "bob": 1}) || !maps.Equal(v.Curr, map[string]int64{"ann": 1, "bob": 1, "cid": 1}) {
		t.Errorf("stored %+v", v)
	}
}
