package spout_test

import (
	"context"
	"fmt"

	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/trident/spout/spouttest"
	"github.com/squallstream/squall/txn"
)

// The calls a runtime makes for an opaque spout with two tasks: one batch
// whose commit fails after the batch was frozen, its exact replay, and
// the next batch.
func Example() {
	ctx := context.Background()
	store := coordstore.NewMemory()
	gen, _ := store.Acquire(ctx, "clickstream") // this process owns the topology
	owner := coordstore.Fence{Owner: "clickstream", Generation: gen}
	src := spouttest.NewSource("clicks@0", "clicks@1")
	src.Append("clicks@0", "a", "b")
	src.Append("clicks@1", "c")

	alloc, _ := spout.NewAllocator(spout.AllocatorConfig{
		Kind: spout.Opaque, Store: store, Stream: "clicks", Fence: owner, Partitions: src,
	})
	var tasks []spout.Executor
	for i := range 2 {
		x, _ := spout.NewOpaque(spout.ExecutorConfig[spouttest.Offsets]{
			Store: store, Stream: "clicks", Fence: owner, Task: i, NumTasks: 2, Emitter: src.Emitter(),
		})
		tasks = append(tasks, x)
	}
	emit := func(a txn.Attempt) {
		b, _ := alloc.Begin(ctx, a) // 1. once per attempt
		var c spouttest.Collector
		for _, x := range tasks {
			x.EmitBatch(ctx, b, &c) // 2. every task, same batch
		}
		fmt.Println(a, "frozen:", b.Frozen, "records:", len(c.Records()))
	}
	beginCommit := func(a txn.Attempt) {
		alloc.BeginCommit(ctx, a) // 3. allocator first,
		for _, x := range tasks {
			x.BeginCommit(ctx, a) // then every task; then state is written
		}
	}

	emit(txn.Attempt{TxID: 1, N: 0})
	beginCommit(txn.Attempt{TxID: 1, N: 0})
	// The state commit fails; more records arrive; txid 1 is replayed.
	src.Append("clicks@0", "d")
	emit(txn.Attempt{TxID: 1, N: 1}) // exactly the frozen batch
	beginCommit(txn.Attempt{TxID: 1, N: 1})
	alloc.Success(ctx, 1) // 4. after the commit
	for _, x := range tasks {
		x.Success(ctx, 1)
	}
	emit(txn.Attempt{TxID: 2, N: 0}) // "d"

	// Output:
	// 1:0 frozen: false records: 3
	// 1:1 frozen: true records: 3
	// 2:0 frozen: false records: 1
}
