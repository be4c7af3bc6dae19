package opaque_test

import (
	"context"
	"fmt"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/opaque"
	"github.com/squallstream/squall/txn"
)

// A count per room, where batch 2 fails after its write and is replayed
// with other content: the replay starts again from the value before batch
// 2, so nothing is counted twice.
func ExampleMap() {
	ctx := context.Background()
	counts := opaque.New(state.NewMemory("presence"), state.MapOptions[int64]{})
	sum := state.CombinerFunc[int64](func(a, b int64) int64 { return a + b })
	room := []state.Key{state.MustKey("room-7")}

	batch := func(tx txn.TxID, n int64, commit bool) {
		counts.BeginCommit(ctx, tx)
		vs, _ := counts.MultiUpdate(ctx, room, []state.ValueUpdater[int64]{state.Combine[int64](sum, n)})
		fmt.Printf("txid %v: +%d -> %d\n", tx, n, vs[0])
		if commit {
			counts.Commit(ctx, tx)
		}
	}
	batch(1, 5, true)
	batch(2, 3, false) // fails after writing
	batch(2, 4, true)  // the replay, with other content
	batch(3, 1, true)

	es, _ := counts.MultiGet(ctx, room)
	fmt.Println("final:", es[0].Val)
	// Output:
	// txid 1: +5 -> 5
	// txid 2: +3 -> 8
	// txid 2: +4 -> 9
	// txid 3: +1 -> 10
	// final: 10
}

// Reading as of the last committed txid: batch 2 wrote but its commit
// failed, so the committed value is still batch 1's.
func ExampleMap_MultiGetCommitted() {
	ctx := context.Background()
	counts := opaque.New(state.NewMemory("presence"), state.MapOptions[int64]{})
	room := []state.Key{state.MustKey("room-7")}

	counts.BeginCommit(ctx, 1)
	counts.MultiPut(ctx, room, []int64{5})
	counts.Commit(ctx, 1)
	counts.BeginCommit(ctx, 2)
	counts.MultiPut(ctx, room, []int64{8}) // the commit of txid 2 fails here

	latest, _ := counts.MultiGet(ctx, room)
	committed, _ := counts.MultiGetCommitted(ctx, 1, room) // the coordinator says: 1
	fmt.Println("latest:", latest[0].Val, "committed:", committed[0].Val)
	// Output: latest: 8 committed: 5
}
