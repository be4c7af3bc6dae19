package spout

import (
	"context"

	"github.com/squallstream/squall/txn"
)

// Executor is one task's share of a spout, as the runtime drives it. The
// three flavours implement it: BatchExecutor, TransactionalExecutor and
// OpaqueExecutor. An Executor is not safe for concurrent use: one
// goroutine (the task) owns it and calls it in the order described in the
// package comment.
type Executor interface {
	// EmitBatch emits this task's share of b to c. It returns once
	// everything the batch needs stored is stored.
	EmitBatch(ctx context.Context, b Batch, c Collector) error

	// BeginCommit is called when attempt a enters its commit phase, after
	// the Allocator's BeginCommit and before any state of the batch is
	// written. An opaque executor stores (freezes) the batch's metadata.
	BeginCommit(ctx context.Context, a txn.Attempt) error

	// Success is called once txid committed. The executor forgets earlier
	// batches and deletes metadata the stream no longer needs. An error
	// means only that some metadata is kept until the next Success.
	Success(ctx context.Context, txid txn.TxID) error

	// Close releases the executor and its spout or emitter.
	Close() error
}

var (
	_ Executor = (*BatchExecutor)(nil)
	_ Executor = (*TransactionalExecutor[int])(nil)
	_ Executor = (*OpaqueExecutor[int])(nil)
)
