package state

import (
	"context"

	"github.com/squallstream/squall/txn"
)

// State is anything updated in step with batch commits. The runtime calls
// BeginCommit(t), then the batch's updates, then Commit(t), for t = 1, 2, 3
// … strictly in order and one batch at a time; a failed batch is begun
// again with the same txid. Implementations must treat a second
// BeginCommit(t) as a replay of t.
type State interface {
	BeginCommit(ctx context.Context, txid txn.TxID) error
	Commit(ctx context.Context, txid txn.TxID) error
}

// ReadOnlyMapState reads grouped state. Between BeginCommit(t) and
// Commit(t) it returns the values as seen by batch t; outside a commit it
// returns the latest values.
type ReadOnlyMapState[V any] interface {
	State
	// MultiGet returns one entry per key, in order.
	MultiGet(ctx context.Context, keys []Key) ([]Entry[V], error)
}

// MapState is grouped state that batches update, such as the per-group
// aggregates of a persistent aggregation.
type MapState[V any] interface {
	ReadOnlyMapState[V]
	// MultiUpdate applies updaters[i] to the value of keys[i] and returns
	// the new values, in order. A key that appears twice is updated twice,
	// the second time from the result of the first.
	MultiUpdate(ctx context.Context, keys []Key, updaters []ValueUpdater[V]) ([]V, error)
	// MultiPut sets the value of each key.
	MultiPut(ctx context.Context, keys []Key, vals []V) error
}

// Remover is implemented by map states that can remove keys (Storm's
// RemovableMapState.multiRemove). It is optional, found by type assertion,
// like the optional interfaces of BackingMap. Every map state of this
// module implements it; within a commit a removal follows the same
// replay rules as a write:
//
//   - opaque.Map stores a tombstone {T, removed, prev}: reads by T and by
//     later batches see the key absent, a replay of T sees prev again and
//     redoes its removal (or not) from there;
//   - transactional.Map stores the tombstone {T, removed}: a replay of T,
//     identical by the transactional contract, removes it again and
//     changes nothing;
//   - nontransactional.Map deletes the key from a backing map that can
//     delete (Deleter), and stores a plain tombstone otherwise.
//
// Removing an absent key leaves it absent. A key removed and then updated in
// the same commit is updated from absent.
type Remover interface {
	// MultiRemove removes the keys: afterwards MultiGet reports them
	// absent and MultiUpdate gives their updaters no value.
	MultiRemove(ctx context.Context, keys []Key) error
}

// RemovableMapState is a MapState that can also remove keys.
type RemovableMapState[V any] interface {
	MapState[V]
	Remover
}

// Snapshottable is ungrouped state: a single value, such as a global count.
type Snapshottable[V any] interface {
	State
	// Get returns the value and whether it is present.
	Get(ctx context.Context) (V, bool, error)
	// Update applies u and returns the new value.
	Update(ctx context.Context, u ValueUpdater[V]) (V, error)
	// Set replaces the value.
	Set(ctx context.Context, v V) error
}
