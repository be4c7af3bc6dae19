// Package opaque implements opaque transactional state: exactly-once
// updates over batches whose content may change when they are replayed,
// as with an opaque Kafka spout.
//
// Each stored value is a Value: the txid of the batch that last wrote it,
// the current value, and the value before that batch. A batch T that finds
// a value written by T itself knows it is a replay and starts again from
// prev; a value written by an earlier batch is started from curr; a value
// written by a later batch is an error (state.ErrBehind), never a silent
// overwrite. Every key a batch touches is written with txid T, so a later
// replay of T can always recover prev.
//
// Map layers this over any state.BackingMap[[]byte], storing values in a
// compact versioned msgpack envelope. See docs/state.md.
package opaque
