package bolt_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/bolt"
	"github.com/squallstream/squall/state/opaque"
)

// Opaque counts in a bbolt file, with an LRU cache in front of the file.
func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "squall-example")
	defer os.RemoveAll(dir)

	store, err := bolt.Open(filepath.Join(dir, "state.db"), bolt.Options{Bucket: "counts"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	cache, _ := state.NewLRU[[]byte](store, 10000)
	counts := opaque.New(cache, state.MapOptions[int64]{})

	ctx := context.Background()
	keys := []state.Key{state.MustKey("room-7", 14), state.MustKey("room-9", 14)}
	counts.BeginCommit(ctx, 1)
	counts.MultiPut(ctx, keys, []int64{3, 4})
	counts.Commit(ctx, 1)

	es, _ := counts.MultiGet(ctx, keys)
	fmt.Println(es[0].Val, es[1].Val)
	// Output: 3 4
}
