package state_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/nontransactional"
	"github.com/squallstream/squall/state/opaque"
	"github.com/squallstream/squall/state/transactional"
	"github.com/squallstream/squall/txn"
)

type flavour[V any] func(state.BackingMap[[]byte], state.MapOptions[V]) state.MapState[V]

func flavours() map[string]struct {
	ints    flavour[int64]
	strings flavour[string]
} {
	return map[string]struct {
		ints    flavour[int64]
		strings flavour[string]
	}{
		"opaque": {
			func(m state.BackingMap[[]byte], o state.MapOptions[int64]) state.MapState[int64] {
				return opaque.New(m, o)
			},
			func(m state.BackingMap[[]byte], o state.MapOptions[string]) state.MapState[string] {
				return opaque.New(m, o)
			},
		},
		"transactional": {
			func(m state.BackingMap[[]byte], o state.MapOptions[int64]) state.MapState[int64] {
				return transactional.New(m, o)
			},
			func(m state.BackingMap[[]byte], o state.MapOptions[string]) state.MapState[string] {
				return transactional.New(m, o)
			},
		},
		"nontransactional": {
			func(m state.BackingMap[[]byte], o state.MapOptions[int64]) state.MapState[int64] {
				return nontransactional.New(m, o)
			},
			func(m state.BackingMap[[]byte], o state.MapOptions[string]) state.MapState[string] {
				return nontransactional.New(m, o)
			},
		},
	}
}

// TestCorruptHandler: a stored value that cannot be decoded (a broken
// envelope, or a user value of another type) fails the call naming the
// key, unless a CorruptHandler takes it: then the handler gets the bytes
// and the key is absent, so the update starts from scratch and overwrites
// it.
func TestCorruptHandler(t *testing.T) {
	ctx := context.Background()
	a, b, c := state.MustKey("a"), state.MustKey("b"), state.MustKey("c")
	add5 := state.ValueUpdaterFunc[int64](func(old int64, _ bool) int64 { return old + 5 })
	for name, fl := range flavours() {
		t.Run(name, func(t *testing.T) {
			mem := state.NewMemory("m")
			garbage := []byte{0xc1} // never valid msgpack
			if err := mem.MultiPut(ctx, []state.Key{a}, [][]byte{garbage}); err != nil {
				t.Fatal(err)
			}
			strs := fl.strings(mem, state.MapOptions[string]{})
			mustCommit(t, strs, 1, func() error { return strs.MultiPut(ctx, []state.Key{b}, []string{"not a number"}) })
			ints := fl.ints(mem, state.MapOptions[int64]{})
			mustCommit(t, ints, 2, func() error { return ints.MultiPut(ctx, []state.Key{c}, []int64{1}) })

			// Without a handler: a reported failure naming the key.
			for _, k := range []state.Key{a, b} {
				if err := ints.BeginCommit(ctx, 3); err != nil {
					t.Fatal(err)
				}
				_, err := ints.MultiUpdate(ctx, []state.Key{k}, []state.ValueUpdater[int64]{add5})
				var de *state.DecodeError
				if !errors.As(err, &de) || de.Key.String() != k.String() || !errors.Is(err, state.ErrCorrupt) {
					t.Fatalf("update of corrupt %v: %v, want a DecodeError naming it", k, err)
				}
			}

			// A failing handler fails the call.
			h, ok := ints.(state.CorruptHandling)
			if !ok {
				t.Fatalf("%T does not implement CorruptHandling", ints)
			}
			sinkDown := errors.New("quarantine down")
			h.SetCorruptHandler(func(context.Context, *state.DecodeError) error { return sinkDown })
			if _, err := ints.MultiUpdate(ctx, []state.Key{a}, []state.ValueUpdater[int64]{add5}); !errors.Is(err, sinkDown) {
				t.Fatalf("failing handler: %v", err)
			}

			// A handler that takes them: the keys are absent.
			var taken []*state.DecodeError
			h.SetCorruptHandler(func(_ context.Context, e *state.DecodeError) error {
				taken = append(taken, e)
				return nil
			})
			var got []int64
			mustCommit(t, ints, 3, func() (err error) {
				got, err = ints.MultiUpdate(ctx, []state.Key{a, b, c, a}, []state.ValueUpdater[int64]{add5, add5, add5, add5})
				return err
			})
			if want := []int64{5, 5, 6, 10}; !slices.Equal(got, want) {
				t.Fatalf("updated %v, want %v", got, want)
			}
			if len(taken) != 2 || taken[0].Key.String() != a.String() || !bytes.Equal(taken[0].Raw, garbage) ||
				taken[1].Key.String() != b.String() || len(taken[1].Raw) == 0 || taken[0].Map != "m" {
				t.Fatalf("handler got %+v", taken)
			}
			// A replay of the batch sees the keys as absent too: the
			// corrupt bytes were not kept (as an opaque prev, say).
			h.SetCorruptHandler(func(_ context.Context, e *state.DecodeError) error {
				t.Errorf("replay met the corrupt value of %v again", e.Key)
				return nil
			})
			mustCommit(t, ints, 3, func() (err error) {
				got, err = ints.MultiUpdate(ctx, []state.Key{a, b, c, a}, []state.ValueUpdater[int64]{add5, add5, add5, add5})
				return err
			})
			want := map[string][]int64{
				"opaque":           {5, 5, 6, 10},    // the replay starts from prev
				"transactional":    {10, 5, 6, 10},   // the stored values: already applied
				"nontransactional": {15, 10, 11, 20}, // counted again
			}[name]
			if !slices.Equal(got, want) {
				t.Fatalf("replay updated %v, want %v", got, want)
			}
			// The values were replaced: a fresh map reads them without a handler.
			fresh := fl.ints(mem, state.MapOptions[int64]{})
			es, err := fresh.MultiGet(ctx, []state.Key{a, b, c})
			if err != nil {
				t.Fatal(err)
			}
			if name == "nontransactional" { // the replay counted again
				es[0].Val, es[1].Val, es[2].Val = es[0].Val-10, es[1].Val-5, es[2].Val-5
			}
			if !es[0].Found || es[0].Val != 10 || es[1].Val != 5 || es[2].Val != 6 {
				t.Fatalf("after the commit: %+v", es)
			}
		})
	}
}

func mustCommit[V any](t *testing.T, m state.MapState[V], txid txn.TxID, f func() error) {
	t.Helper()
	ctx := context.Background()
	if err := m.BeginCommit(ctx, txid); err != nil {
		t.Fatal(err)
	}
	if err := f(); err != nil {
		t.Fatalf("batch %v: %v", txid, err)
	}
	if err := m.Commit(ctx, txid); err != nil {
		t.Fatal(err)
	}
}
