// Package state holds squall's state abstractions: State, MapState and
// BackingMap, the transactional and non-transactional maps built over a
// BackingMap, caches, the memory and embedded on-disk backing maps, and the
// domain types shared by every layer that commits state, such as TxID.
//
// # Layers
//
// From the stream down to the disk:
//
//	MapState[V]          opaque.Map, transactional.Map, nontransactional.Map
//	                     (and Global for ungrouped state): txid bookkeeping,
//	                     the per-commit read cache, user values via a Codec
//	BackingMap[[]byte]   LRU (optional cache), statetest.FaultMap (tests)
//	BackingMap[[]byte]   Memory, bolt.Map, a Cassandra table: bytes by Key
//
// A BackingMap is a plain bulk key-value store. The map flavours keep their
// bookkeeping (txid, prev) inside the stored bytes, in a compact versioned
// msgpack envelope, so any store that can hold bytes by key can hold any
// flavour, and a store never has to understand txids.
//
// # Ordering contract
//
// The runtime calls BeginCommit(t), the batch's MultiGet/MultiUpdate/
// MultiPut calls, then Commit(t), for t = 1, 2, 3 …, one batch at a time.
// A batch that fails is begun again with the same t (a replay); batches
// are never replayed once a later one has begun. Maps rely on this order
// and check what they can: txid 0 is not a batch (ErrNoTxID), Commit must
// match BeginCommit (ErrNotBegun), and a stored txid ahead of the batch is
// ErrBehind.
//
// # Errors
//
// Errors carry their failure kind (package failure): backing map errors
// are wrapped in *MapError (which map, which operation, how many keys)
// keeping the store's classification, and context cancellations become
// retryable; a stored value that cannot be decoded is a reported
// *DecodeError naming the key; ErrBehind and programming errors are fatal.
//
// # Seed rule
//
// Updaters receive a freshly decoded value on every call and may modify it
// in place; the opaque map keeps prev as the stored bytes, so an updater
// can never change a previous value through an alias.
package state
