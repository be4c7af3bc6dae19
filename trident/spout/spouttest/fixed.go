package spouttest

import (
	"context"
	"slices"
	"sync"

	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// Fixed is a non-transactional batch spout (a spout.Batcher) over a fixed
// list of values, like Storm's FixedBatchSpout: each new txid gets the
// next BatchSize values as one-field tuples, a replayed txid gets the same
// values again until it is acknowledged, and after the last value batches
// are empty (or start over, with Cycle). Safe for concurrent use.
type Fixed struct {
	mu      sync.Mutex
	values  []any
	size    int
	cycle   bool
	next    int
	batches map[txn.TxID][]any
	acked   []txn.TxID
	closed  bool
}

var _ spout.Batcher = (*Fixed)(nil)

// NewFixed returns a Fixed spout emitting batches of up to size values
// (size 0 means 1). It keeps values and emits them in place: the caller
// must not modify them afterwards.
func NewFixed(size int, cycle bool, values ...any) *Fixed {
	return &Fixed{values: values, size: max(size, 1), cycle: cycle, batches: map[txn.TxID][]any{}}
}

// EmitBatch implements spout.Batcher.
func (f *Fixed) EmitBatch(ctx context.Context, a txn.Attempt, c spout.Collector) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return spout.ErrClosed
	}
	b, ok := f.batches[a.TxID]
	if !ok {
		if f.cycle && f.next >= len(f.values) {
			f.next = 0
		}
		end := min(f.next+f.size, len(f.values))
		b = f.values[f.next:end:end] // Fixed never writes values, nor may the collector
		f.next = end
		f.batches[a.TxID] = b
	}
	for i := range b {
		c.Emit(b[i : i+1 : i+1]...) // the one-value tuple in place, capped so that an append copies: no slice per value
	}
	return nil
}

// Ack implements spout.Batcher.
func (f *Fixed) Ack(ctx context.Context, txid txn.TxID) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.batches, txid)
	f.acked = append(f.acked, txid)
	return nil
}

// Acked returns the acknowledged txids, in order.
func (f *Fixed) Acked() []txn.TxID {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.acked)
}

// Close implements io.Closer.
func (f *Fixed) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	return nil
}
