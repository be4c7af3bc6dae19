package spout

import (
	"context"

	"github.com/squallstream/squall/txn"
)

// OpaqueExecutor is one task's executor of an opaque partitioned spout
// (Storm's OpaquePartitionedTridentSpoutExecutor emitter), with one rule
// Storm lacks: a batch is frozen when it enters its commit phase.
//
// Until then, nothing of a batch is stored: a new batch of a partition
// starts where the partition's previous batch ended (this task's previous
// live batch, or the last stored one), and a replay of the txid starts
// there again, so it may hold more or fewer records than the first
// attempt. BeginCommit stores the metadata of the batch as emitted, before
// any state of the txid is written. From then on every attempt at the
// txid re-emits exactly those tuples, like a transactional spout, so a
// commit that wrote part of its keys and failed is redone over the same
// keys. See docs/spouts.md for why this keeps opaque state exactly-once.
type OpaqueExecutor[M any] struct {
	partitioned[M]
}

// NewOpaque returns the executor of task cfg.Task, or an error matching
// ErrInvalidConfig.
func NewOpaque[M any](cfg ExecutorConfig[M]) (*OpaqueExecutor[M], error) {
	x, err := newPartitioned(cfg)
	if err != nil {
		return nil, err
	}
	return &OpaqueExecutor[M]{partitioned: x}, nil
}

// EmitBatch emits this task's partitions of b to c, in partition order,
// storing nothing. If b is frozen, a partition whose metadata for the txid
// is stored is re-emitted from it (nothing for a marker); any other
// partition gets a new batch after its previous one. A partition whose
// previous batch is not known yet (it moved from another task while that
// task's batches are in flight) has no batch in this txid.
//
// An error fails the batch; the runtime replays it.
func (x *OpaqueExecutor[M]) EmitBatch(ctx context.Context, b Batch, c Collector) error {
	r, err := x.begin(ctx, b)
	if err != nil {
		return err
	}
	for _, p := range r.mine {
		res, err := x.emitPartition(ctx, b, p, c)
		if err != nil {
			return err
		}
		r.results[p] = res
	}
	r.done = true
	return nil
}

func (x *OpaqueExecutor[M]) emitPartition(ctx context.Context, b Batch, p Partition, c Collector) (result[M], error) {
	a := b.Attempt
	if b.Frozen {
		m, found, isMark, err := x.meta.get(ctx, p, a.TxID)
		switch {
		case err != nil:
			return result[M]{}, err
		case found && isMark:
			return result[M]{skipped: true, stored: true}, nil
		case found:
			if err := x.reemit(ctx, a, p, m, c); err != nil {
				return result[M]{}, err
			}
			return result[M]{meta: m, stored: true}, nil
		}
		// Not found: this task's BeginCommit did not get to p, so the
		// commit never wrote state and the batch of p is still free.
	}
	prev, inMemory, certain := x.tr.prev(p, a.TxID)
	if !certain {
		return result[M]{skipped: true}, nil
	}
	var prevp *M
	if inMemory {
		prevp = &prev
	} else {
		m, _, ok, err := x.meta.before(ctx, p, a.TxID, a.TxID)
		if err != nil {
			return result[M]{}, err
		}
		if ok {
			prevp = &m
		}
	}
	m, err := x.emit(ctx, a, p, prevp, c)
	if err != nil {
		return result[M]{}, err
	}
	return result[M]{meta: m}, nil
}

// BeginCommit freezes attempt a: it stores the metadata of each of this
// task's partitions in the batch (a marker for one that had no batch), so
// that every later attempt at the txid re-emits the same tuples. The
// runtime calls it after the Allocator's BeginCommit and before any
// state of the txid is written, and writes no state if it fails.
//
// It returns an error matching ErrUnknownAttempt (retryable) if a is not
// the attempt this executor last emitted for its txid, or if that
// emission failed. Partitions of other tasks are never touched.
func (x *OpaqueExecutor[M]) BeginCommit(ctx context.Context, a txn.Attempt) error {
	if x.closed {
		return ErrClosed
	}
	r, ok := x.tr.record(a)
	if !ok {
		return unknownAttempt(x.meta.stream, a)
	}
	for _, p := range r.mine {
		res := r.results[p]
		if res.stored {
			continue
		}
		if err := x.meta.put(ctx, p, a.TxID, res.meta, res.skipped); err != nil {
			return err
		}
		res.stored = true
		r.results[p] = res
	}
	return nil
}

// Success forgets txid and earlier batches and deletes the metadata of
// this task's partitions before txid.
func (x *OpaqueExecutor[M]) Success(ctx context.Context, txid txn.TxID) error {
	return x.success(ctx, txid)
}

// Close closes the emitter if it implements io.Closer. The store is not
// closed: it belongs to the runtime.
func (x *OpaqueExecutor[M]) Close() error { return x.close() }
