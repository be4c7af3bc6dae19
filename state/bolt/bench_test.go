package bolt_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/bolt"
)

const benchKeys = 10000

// BenchmarkBolt measures one MultiGet or MultiPut of 10k keys, each put
// one bbolt transaction, with and without fsync.
func BenchmarkBolt(b *testing.B) {
	ctx := context.Background()
	keys := make([]state.Key, benchKeys)
	vals := make([][]byte, benchKeys)
	for i := range keys {
		keys[i] = state.MustKey(fmt.Sprintf("room-%d", i%500), i)
		vals[i] = []byte{0x94, 0x11, 0x64, 0x78, 0x77}
	}
	for _, noSync := range []bool{false, true} {
		name := "sync"
		if noSync {
			name = "nosync"
		}
		b.Run("MultiPut10k/"+name, func(b *testing.B) {
			m := open(b, filepath.Join(b.TempDir(), "bench.db"), bolt.Options{NoSync: noSync})
			b.ReportAllocs()
			for b.Loop() {
				if err := m.MultiPut(ctx, keys, vals); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("MultiGet10k", func(b *testing.B) {
		m := open(b, filepath.Join(b.TempDir(), "bench.db"), bolt.Options{NoSync: true})
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
