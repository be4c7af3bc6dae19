package spout

import (
	"context"
	"fmt"
	"io"

	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/txn"
)

// allocPartition names the allocator's entries in the store; user
// partitions cannot start with '$'.
const allocPartition = "$partitions"

// Allocator allocates partitions to each batch of one stream: it decides
// which partitions a batch attempt reads, and stores that decision. It is
// what Storm calls the spout's coordinator (TridentSpoutCoordinator
// wrapped around a partitioned spout's Coordinator); squall keeps the word
// coordinator for the batch coordinator. There is one per stream, whatever the number of tasks, so
// that every task sees the same partition set for a batch and each
// partition is emitted by exactly one task.
//
// When the set is stored depends on the kind:
//
//   - Transactional: at Begin, before the batch is announced; a replay
//     reuses the stored set, so it is identical.
//   - Opaque: at BeginCommit (the set is frozen with the batch's
//     metadata); a replay before that lists the partitions again, so
//     partitions added or removed in between take effect.
//   - NonTransactional: never; batches have no partitions.
//
// An Allocator is not safe for concurrent use: one goroutine owns it.
type Allocator struct {
	cfg     AllocatorConfig
	key     coordstore.Key
	pending map[txn.TxID]pendingSet // opaque: sets handed out, not yet frozen
	closed  bool
}

type pendingSet struct {
	attempt    txn.Attempt
	partitions []Partition
	frozen     bool
}

// NewAllocator returns an Allocator, or an error matching
// ErrInvalidConfig.
func NewAllocator(cfg AllocatorConfig) (*Allocator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Allocator{
		cfg:     cfg,
		key:     coordstore.Key{Owner: cfg.Fence.Owner, Stream: cfg.Stream, Partition: allocPartition},
		pending: map[txn.TxID]pendingSet{},
	}, nil
}

// Kind returns the spout's flavour.
func (c *Allocator) Kind() Kind { return c.cfg.Kind }

// Ready reports whether a new batch may start now: the Lister's answer if
// it implements Readier, and true otherwise.
func (c *Allocator) Ready(ctx context.Context, txid txn.TxID) bool {
	if r, ok := c.cfg.Partitions.(Readier); ok && !c.closed {
		return r.Ready(ctx, txid)
	}
	return !c.closed
}

// Begin decides the partitions of attempt a. The runtime calls it once per
// attempt the batch coordinator emits, before any executor's EmitBatch,
// and gives the result to every executor. For a transactional spout the
// set is stored before Begin returns.
func (c *Allocator) Begin(ctx context.Context, a txn.Attempt) (Batch, error) {
	if c.closed {
		return Batch{}, ErrClosed
	}
	if err := coordstore.ValidateTxID(a.TxID); err != nil {
		return Batch{}, fmt.Errorf("%w: %w", ErrInvalidBatch, err)
	}
	if c.cfg.Kind == NonTransactional {
		return Batch{Attempt: a}, nil
	}
	ps, frozen, err := c.stored(ctx, a.TxID)
	if err != nil {
		return Batch{}, err
	}
	if !frozen {
		if ps, err = c.list(ctx); err != nil {
			return Batch{}, err
		}
		if c.cfg.Kind == Transactional {
			if err := c.put(ctx, a.TxID, ps); err != nil {
				return Batch{}, err
			}
			frozen = true
		}
	}
	if c.cfg.Kind == Opaque {
		c.pending[a.TxID] = pendingSet{attempt: a, partitions: ps, frozen: frozen}
	}
	return Batch{Attempt: a, Partitions: ps, Frozen: frozen}, nil
}

// stored returns the set stored for txid, if any.
func (c *Allocator) stored(ctx context.Context, txid txn.TxID) ([]Partition, bool, error) {
	v, ok, err := c.cfg.Store.GetMeta(ctx, c.key, txid)
	if err != nil {
		return nil, false, c.errorf(txid, "load partitions: %w", err)
	}
	if !ok {
		return nil, false, nil
	}
	ps, err := decodePartitions(v)
	if err != nil {
		return nil, false, c.errorf(txid, "%w", err)
	}
	return ps, true, nil
}

func (c *Allocator) list(ctx context.Context) ([]Partition, error) {
	ps, err := c.cfg.Partitions.Partitions(ctx)
	if err != nil {
		return nil, fmt.Errorf("spout: stream %q: list partitions: %w", c.cfg.Stream, err)
	}
	ps, err = normalize(ps)
	if err != nil {
		return nil, fmt.Errorf("spout: stream %q: list partitions: %w", c.cfg.Stream, err)
	}
	return ps, nil
}

func (c *Allocator) put(ctx context.Context, txid txn.TxID, ps []Partition) error {
	v, err := encodePartitions(ps)
	if err != nil {
		return c.errorf(txid, "%w", err)
	}
	if err := c.cfg.Store.PutMeta(ctx, c.cfg.Fence.Generation, c.key, txid, v); err != nil {
		return c.errorf(txid, "store partitions: %w", err)
	}
	return nil
}

func (c *Allocator) errorf(txid txn.TxID, format string, args ...any) error {
	return fmt.Errorf("spout: stream %q txid %d: "+format, append([]any{c.cfg.Stream, txid}, args...)...)
}

// BeginCommit is called when attempt a enters its commit phase, before
// every executor's BeginCommit. An opaque allocator stores (freezes) the
// partition set it gave a, so that every later attempt at the txid gets
// the same set; the other kinds have nothing to do. It returns an error
// matching ErrUnknownAttempt (retryable) if a is not the attempt last
// begun for its txid.
func (c *Allocator) BeginCommit(ctx context.Context, a txn.Attempt) error {
	if c.closed {
		return ErrClosed
	}
	if c.cfg.Kind != Opaque {
		return nil
	}
	p, ok := c.pending[a.TxID]
	if !ok || p.attempt != a {
		return unknownAttempt(c.cfg.Stream, a)
	}
	if p.frozen {
		return nil
	}
	if err := c.put(ctx, a.TxID, p.partitions); err != nil {
		return err
	}
	p.frozen = true
	c.pending[a.TxID] = p
	return nil
}

// Success is called once txid committed: the allocator deletes the
// partition sets of earlier txids.
func (c *Allocator) Success(ctx context.Context, txid txn.TxID) error {
	if c.closed {
		return ErrClosed
	}
	if c.cfg.Kind == NonTransactional {
		return nil
	}
	for t := range c.pending {
		if t <= txid {
			delete(c.pending, t)
		}
	}
	if err := c.cfg.Store.CleanupMetaBefore(ctx, c.cfg.Fence.Generation, c.key, txid); err != nil {
		return c.errorf(txid, "clean up partitions: %w", err)
	}
	return nil
}

// Close closes the Lister if it implements io.Closer; the allocator
// then never calls it again. The runtime makes an allocator, and its
// Lister, for every worker start and closes both when the worker stops.
// The store is not closed: it belongs to the runtime.
func (c *Allocator) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	c.pending = nil
	if cl, ok := c.cfg.Partitions.(io.Closer); ok {
		return cl.Close()
	}
	return nil
}

// Coordinator is the former name of Allocator.
//
// Deprecated: use Allocator.
type Coordinator = Allocator

// CoordinatorConfig is the former name of AllocatorConfig.
//
// Deprecated: use AllocatorConfig.
type CoordinatorConfig = AllocatorConfig

// NewCoordinator is the former name of NewAllocator.
//
// Deprecated: use NewAllocator.
func NewCoordinator(cfg AllocatorConfig) (*Allocator, error) { return NewAllocator(cfg) }
