package state

import (
	"context"

	"github.com/squallstream/squall/txn"
)

// CommittedReader is implemented by map state that can tell the value a
// committed batch wrote from one a later batch wrote but has not
// committed (yet): opaque.Map can, because it keeps the previous value
// next to the current one.
type CommittedReader[V any] interface {
	// MultiGetCommitted returns one entry per key, in order: the key's
	// value as of txid committed. A value stored by a batch at or before
	// committed is returned as is; one stored by a later batch (written,
	// not committed) gives way to the value before it, which a committed
	// batch wrote. committed must be the last committed txid (from the
	// coordinator); given an older one, a value committed after it may
	// be returned. It does not take part in a commit and may run beside
	// one.
	MultiGetCommitted(ctx context.Context, committed txn.TxID, keys []Key) ([]Entry[V], error)
}
