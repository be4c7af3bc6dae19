package spout

import (
	"context"

	"github.com/squallstream/squall/txn"
)

// Batcher is a non-transactional batch spout (Storm's IBatchSpout): it
// emits whatever it has for a batch and hears when the batch committed. A
// replay of a txid should emit the same tuples if the spout can, but
// nothing enforces it, so state fed by a Batcher is at-least-once unless
// the spout keeps its batches until they are acknowledged.
//
// A Batcher may also implement io.Closer.
type Batcher interface {
	// EmitBatch emits the batch of attempt a to c.
	EmitBatch(ctx context.Context, a txn.Attempt, c Collector) error
	// Ack is called once the batch txid committed. Later batches may
	// already have been emitted.
	Ack(ctx context.Context, txid txn.TxID) error
}

// BatchCommitter is a Batcher that takes part in the commit of its batches
// (Storm's ICommitterTridentSpout): Commit is called in every task of the
// source when attempt a enters its commit phase, in txid order, before
// any state of the batch is written. An error fails the commit, which is
// retried (Commit is then called again for the same txid: make it
// idempotent). Use it for work that must succeed for the batch to commit
// — reserving what the batch consumed upstream, say; work that must only
// follow a commit (acknowledging upstream so that it may forget the
// records) belongs in Ack, which runs once the batch committed.
type BatchCommitter interface {
	Batcher
	Commit(ctx context.Context, a txn.Attempt) error
}

// Lister lists the partitions of a partitioned source (the allocator
// half of Storm's partitioned spouts, getPartitionsForBatch). The result
// need not be sorted; partitions may appear and disappear between calls.
//
// A Lister may also implement Readier and io.Closer. The trident sources
// make one per worker start, from a constructor, and close it (if it is an
// io.Closer) when that worker stops; it is not called after Close.
type Lister interface {
	Partitions(ctx context.Context) ([]Partition, error)
}

// ListerFunc adapts a function to a Lister.
type ListerFunc func(ctx context.Context) ([]Partition, error)

// Partitions calls f.
func (f ListerFunc) Partitions(ctx context.Context) ([]Partition, error) { return f(ctx) }

// Readier is implemented by a Lister that can say whether a new batch
// should start now (Storm's isReady), for example to wait for data.
type Readier interface {
	Ready(ctx context.Context, txid txn.TxID) bool
}

// Emitter emits the batches of one task's partitions; metadata of type M
// records what a batch of one partition holds (for Kafka: its offset
// range). It is used by both partitioned flavours:
//
//   - Emit emits a new batch that continues where the batch described by
//     prev ended (prev is nil for a partition's first batch), and returns
//     the new batch's metadata. An empty batch returns metadata that keeps
//     the position, so that the next batch picks up new records.
//   - Reemit emits exactly the batch described by meta again: the same
//     tuples in the same order, whatever the source received since. If
//     that is no longer possible (the records were deleted by retention or
//     compaction), it returns an error matching ErrUnavailable.
//
// A transactional spout calls Reemit for every replay; an opaque spout
// calls it only to replay a batch frozen at the start of its commit phase.
// The two are called for one partition at a time, from one goroutine.
//
// An Emitter may also implement Refresher, Committer and io.Closer.
type Emitter[M any] interface {
	Emit(ctx context.Context, a txn.Attempt, p Partition, prev *M, c Collector) (M, error)
	Reemit(ctx context.Context, a txn.Attempt, p Partition, meta M, c Collector) error
}

// Refresher is implemented by an Emitter that wants to know when its
// task's partitions change (Storm's refreshPartitions), for example to
// open and close readers. Refresh is called before the first batch and
// before every batch whose partitions differ from the previous one's.
type Refresher interface {
	Refresh(ctx context.Context, owned []Partition) error
}

// Committer is implemented by an Emitter that wants to hear when batches
// committed (Storm's success(txid)), for example to acknowledge its
// records to the source. Committed(ctx, txid) is called on each task's
// emitter after the allocator stored txid as committed (so every txid up
// to it committed, in every state of the topology), once the task's
// metadata of earlier batches is cleaned up. It is never called for an
// attempt that failed or for a txid that did not commit.
//
// Delivery is at-least-once and may skip: a txid may be reported again
// (after a worker restart), and a crash between the commit and the call
// loses it, so treat txid as "everything up to txid committed", not as
// one batch. An error undoes nothing that committed: a retryable one
// (failure.Retryable) is reported, and the next commit calls again with a
// greater txid; any other error crashes the worker, as from any spout
// call.
type Committer interface {
	Committed(ctx context.Context, txid txn.TxID) error
}

// CommitterFunc adapts a function to a Committer.
type CommitterFunc func(ctx context.Context, txid txn.TxID) error

// Committed calls f.
func (f CommitterFunc) Committed(ctx context.Context, txid txn.TxID) error { return f(ctx, txid) }
