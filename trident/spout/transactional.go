package spout

import (
	"context"

	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/txn"
)

// TransactionalExecutor is one task's executor of a transactional
// partitioned spout (Storm's PartitionedTridentSpoutExecutor emitter).
//
// A batch of a partition is fixed at its first emission: the executor has
// the emitter emit it into a buffer, stores its metadata, and only then
// passes the tuples on (persist before you announce). Every later attempt
// at the txid finds the metadata and re-emits exactly the same batch, so
// state may rely on replays being identical (transactional maps).
type TransactionalExecutor[M any] struct {
	partitioned[M]
	buf buffer
}

// NewTransactional returns the executor of task cfg.Task, or an error
// matching ErrInvalidConfig.
func NewTransactional[M any](cfg ExecutorConfig[M]) (*TransactionalExecutor[M], error) {
	x, err := newPartitioned(cfg)
	if err != nil {
		return nil, err
	}
	return &TransactionalExecutor[M]{partitioned: x}, nil
}

// EmitBatch emits this task's partitions of b, in partition order. For
// each partition:
//
//   - if the store has the partition's metadata for the txid, the batch is
//     re-emitted from it (or nothing is emitted for a marker);
//   - otherwise a new batch is emitted after the partition's last stored
//     batch, its metadata is stored, and then its tuples are passed to c.
//
// A partition whose last batch is not known yet (it moved from another
// task while that task's batches are in flight) or whose store has a
// later batch already gets a marker: no batch in this txid.
//
// An error fails the batch; the runtime replays it. Tuples of partitions
// handled before the error may have reached c.
func (x *TransactionalExecutor[M]) EmitBatch(ctx context.Context, b Batch, c Collector) error {
	r, err := x.begin(ctx, b)
	if err != nil {
		return err
	}
	for _, p := range r.mine {
		res, err := x.emitPartition(ctx, b.Attempt, p, c)
		if err != nil {
			return err
		}
		r.results[p] = res
	}
	r.done = true
	return nil
}

func (x *TransactionalExecutor[M]) emitPartition(ctx context.Context, a txn.Attempt, p Partition, c Collector) (result[M], error) {
	txid := a.TxID
	m, found, isMark, err := x.meta.get(ctx, p, txid)
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

	// The partition's last batch. Storm's rule is kept as a guard: if a
	// batch of p is stored for a later txid, this txid has nothing for p
	// (it would overlap that batch). The tracker normally prevents it: a
	// batch of p is emitted only after p's earlier batches were stored.
	_, _, certain := x.tr.prev(p, txid)
	var (
		prev M
		last txn.TxID
		ok   bool
	)
	if certain {
		if prev, last, ok, err = x.meta.before(ctx, p, txid, coordstore.MaxTxID); err != nil {
			return result[M]{}, err
		}
	}
	if !certain || (ok && last > txid) {
		if err := x.meta.put(ctx, p, txid, m, true); err != nil {
			return result[M]{}, err
		}
		return result[M]{skipped: true, stored: true}, nil
	}
	var prevp *M
	if ok {
		prevp = &prev
	}
	x.buf.out = c
	defer x.buf.drop()
	if m, err = x.emit(ctx, a, p, prevp, &x.buf); err != nil {
		return result[M]{}, err
	}
	if err := x.meta.put(ctx, p, txid, m, false); err != nil {
		return result[M]{}, err
	}
	x.buf.flush()
	return result[M]{meta: m, stored: true}, nil
}

// BeginCommit has nothing to do: the batch's metadata was stored when it
// was first emitted.
func (x *TransactionalExecutor[M]) BeginCommit(ctx context.Context, a txn.Attempt) error {
	if x.closed {
		return ErrClosed
	}
	return nil
}

// Success forgets txid and earlier batches and deletes the metadata of
// this task's partitions before txid.
func (x *TransactionalExecutor[M]) Success(ctx context.Context, txid txn.TxID) error {
	return x.success(ctx, txid)
}

// Close closes the emitter if it implements io.Closer. The store is not
// closed: it belongs to the runtime.
func (x *TransactionalExecutor[M]) Close() error { return x.close() }
