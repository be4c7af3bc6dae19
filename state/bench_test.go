package state_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/nontransactional"
	"github.com/squallstream/squall/state/opaque"
	"github.com/squallstream/squall/state/statetest"
	"github.com/squallstream/squall/state/transactional"
	"github.com/squallstream/squall/txn"
)

const benchKeys = 10000

func benchKeySet() []state.Key {
	keys := make([]state.Key, benchKeys)
	for i := range keys {
		keys[i] = state.MustKey(fmt.Sprintf("room-%d", i%500), i)
	}
	return keys
}

func benchVals() [][]byte {
	vals := make([][]byte, benchKeys)
	for i := range vals {
		vals[i] = []byte{0x94, 0x11, 0x64, 0x78, 0x77} // a small opaque counter
	}
	return vals
}

func BenchmarkNewKey(b *testing.B) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := state.NewKey("room-7", i); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMemory measures one MultiGet or MultiPut of 10k keys.
func BenchmarkMemory(b *testing.B) {
	ctx := context.Background()
	keys, vals := benchKeySet(), benchVals()
	b.Run("MultiPut10k", func(b *testing.B) {
		m := state.NewMemory("")
		b.ReportAllocs()
		for b.Loop() {
			if err := m.MultiPut(ctx, keys, vals); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("MultiGet10k", func(b *testing.B) {
		m := state.NewMemory("")
		if err := m.MultiPut(ctx, keys, vals); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := m.MultiGet(ctx, keys); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkMultiUpdate compares the map flavours on a memory map: one
// batch (BeginCommit, MultiUpdate of 10k distinct keys with +1, Commit)
// per iteration, every key already present.
func BenchmarkMultiUpdate(b *testing.B) {
	ctx := context.Background()
	keys := benchKeySet()
	ups := make([]state.ValueUpdater[int64], len(keys))
	for i := range ups {
		ups[i] = statetest.Add(1)
	}
	flavours := []struct {
		name string
		make func(state.BackingMap[[]byte]) state.MapState[int64]
	}{
		{"nontransactional", func(m state.BackingMap[[]byte]) state.MapState[int64] {
			return nontransactional.New(m, state.MapOptions[int64]{})
		}},
		{"transactional", func(m state.BackingMap[[]byte]) state.MapState[int64] {
			return transactional.New(m, state.MapOptions[int64]{})
		}},
		{"opaque", func(m state.BackingMap[[]byte]) state.MapState[int64] {
			return opaque.New(m, state.MapOptions[int64]{})
		}},
	}
	for _, fl := range flavours {
		b.Run(fl.name, func(b *testing.B) {
			m := fl.make(state.NewMemory(""))
			tx := txn.TxID(1)
			batch := func() {
				if err := m.BeginCommit(ctx, tx); err != nil {
					b.Fatal(err)
				}
				if _, err := m.MultiUpdate(ctx, keys, ups); err != nil {
					b.Fatal(err)
				}
				if err := m.Commit(ctx, tx); err != nil {
					b.Fatal(err)
				}
				tx++
			}
			batch() // every key present from now on
			b.ReportAllocs()
			for b.Loop() {
				batch()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchKeys, "ns/key")
		})
	}
}
