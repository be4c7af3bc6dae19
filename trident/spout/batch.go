package spout

import (
	"context"
	"io"

	"github.com/squallstream/squall/txn"
)

// BatchExecutor is one task's executor of a non-transactional batch spout
// (Storm's BatchSpoutExecutor). It stores nothing: it passes each batch
// attempt to the Batcher and acknowledges committed txids.
type BatchExecutor struct {
	spout  Batcher
	closed bool
}

// NewBatchExecutor returns a BatchExecutor, or an error matching
// ErrInvalidConfig.
func NewBatchExecutor(cfg BatchConfig) (*BatchExecutor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &BatchExecutor{spout: cfg.Spout}, nil
}

// EmitBatch has the spout emit b.Attempt to c.
func (x *BatchExecutor) EmitBatch(ctx context.Context, b Batch, c Collector) error {
	if x.closed {
		return ErrClosed
	}
	return x.spout.EmitBatch(ctx, b.Attempt, c)
}

// BeginCommit calls the spout's Commit if it is a BatchCommitter.
func (x *BatchExecutor) BeginCommit(ctx context.Context, a txn.Attempt) error {
	if x.closed {
		return ErrClosed
	}
	if c, ok := x.spout.(BatchCommitter); ok {
		return c.Commit(ctx, a)
	}
	return nil
}

// Success acknowledges txid to the spout.
func (x *BatchExecutor) Success(ctx context.Context, txid txn.TxID) error {
	if x.closed {
		return ErrClosed
	}
	return x.spout.Ack(ctx, txid)
}

// Close closes the spout if it implements io.Closer.
func (x *BatchExecutor) Close() error {
	if x.closed {
		return nil
	}
	x.closed = true
	if cl, ok := x.spout.(io.Closer); ok {
		return cl.Close()
	}
	return nil
}
