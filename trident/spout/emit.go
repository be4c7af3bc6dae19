package spout

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/txn"
)

// partitioned is what both partitioned executors share: the emitter, the
// metadata store and the live batches.
type partitioned[M any] struct {
	meta    metaStore[M]
	emitter Emitter[M]
	tr      tracker[M]
	closed  bool
}

func newPartitioned[M any](cfg ExecutorConfig[M]) (partitioned[M], error) {
	if err := cfg.Validate(); err != nil {
		return partitioned[M]{}, err
	}
	return partitioned[M]{
		meta:    metaStore[M]{store: cfg.Store, stream: cfg.Stream, fence: cfg.Fence, codec: cfg.codec()},
		emitter: cfg.Emitter,
		tr:      newTracker[M](cfg.Task, cfg.numTasks()),
	}, nil
}

// begin starts b: it records the batch and tells the emitter if this
// task's partitions changed.
func (x *partitioned[M]) begin(ctx context.Context, b Batch) (*record[M], error) {
	if x.closed {
		return nil, ErrClosed
	}
	r, err := x.tr.begin(b)
	if err != nil {
		return nil, err
	}
	if rf, ok := x.emitter.(Refresher); ok && x.tr.changed(r) {
		if err := rf.Refresh(ctx, r.mine); err != nil {
			x.tr.refreshed = false // try again with the next batch
			return nil, &PartitionError{Stream: x.meta.stream, TxID: b.Attempt.TxID, Op: "refresh", Err: err}
		}
	}
	return r, nil
}

// emit has the emitter emit a new batch of p.
func (x *partitioned[M]) emit(ctx context.Context, a txn.Attempt, p Partition, prev *M, c Collector) (M, error) {
	m, err := x.emitter.Emit(ctx, a, p, prev, c)
	if err != nil {
		return m, x.meta.fail(p, a.TxID, "emit", err)
	}
	return m, nil
}

// reemit has the emitter emit the batch meta of p again. A batch that can
// no longer be produced is a reported failure: the stream cannot go on
// without losing or double-counting its records, so an operator must
// decide.
func (x *partitioned[M]) reemit(ctx context.Context, a txn.Attempt, p Partition, m M, c Collector) error {
	err := x.emitter.Reemit(ctx, a, p, m, c)
	if err == nil {
		return nil
	}
	err = x.meta.fail(p, a.TxID, "reemit", err)
	if errors.Is(err, ErrUnavailable) {
		return failure.Reported(err)
	}
	return err
}

// success forgets txid and the batches before it and deletes the
// metadata of each of this task's partitions before txid, where the
// store holds the partition's entry for txid (the position survives).
func (x *partitioned[M]) success(ctx context.Context, txid txn.TxID) error {
	if x.closed {
		return ErrClosed
	}
	var errs []error
	if r := x.tr.success(txid); r != nil {
		for _, p := range r.mine {
			if res, ok := r.results[p]; ok && res.stored && !res.skipped {
				if err := x.meta.cleanup(ctx, p, txid); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	if c, ok := x.emitter.(Committer); ok {
		if err := c.Committed(ctx, txid); err != nil {
			errs = append(errs, fmt.Errorf("spout: emitter's Committed(%v): %w", txid, err))
		}
	}
	return errors.Join(errs...)
}

func (x *partitioned[M]) close() error {
	if x.closed {
		return nil
	}
	x.closed = true
	x.tr.live = nil
	if cl, ok := x.emitter.(io.Closer); ok {
		return cl.Close()
	}
	return nil
}
