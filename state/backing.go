package state

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// BackingMap is the storage seam under every map state: a store that reads
// and writes values by key, in bulk. It knows nothing of txids; the opaque,
// transactional and non-transactional maps put their bookkeeping inside the
// values they store. Persistent stores implement BackingMap[[]byte] and the
// map flavours sit on top of them.
//
// The contract, checked by the conformance suite in package statetest:
//
//   - MultiGet returns exactly one Entry per key, in the order of keys.
//     Keys never written are absent (Found false); a written value is
//     present even when it is empty or nil.
//   - MultiPut writes vals[i] under keys[i]; if a key repeats, the last
//     value wins. len(keys) != len(vals) is ErrLength. A MultiPut that
//     returns an error may have written any subset of the keys: callers
//     must be able to replay it (the map flavours are).
//   - Calls with no keys succeed and do nothing.
//   - A cancelled or expired ctx makes the call fail with an error that
//     wraps ctx.Err(); implementations check it at least before starting
//     work.
//   - Values crossing the seam are read-only: a caller must not modify a
//     value returned by MultiGet, and must not modify a value after passing
//     it to MultiPut. Implementations may share them (a cache does).
//   - Errors worth retrying (timeouts, unavailable replicas, I/O errors)
//     are marked with failure.Retryable; anything else is fatal.
//
// Optional behaviour is discovered by type assertion: Named, Concurrent,
// Deleter and io.Closer.
type BackingMap[V any] interface {
	MultiGet(ctx context.Context, keys []Key) ([]Entry[V], error)
	MultiPut(ctx context.Context, keys []Key, vals []V) error
}

// Named is implemented by backing maps that can name themselves in errors
// and logs, e.g. "bbolt /var/lib/app/state.db bucket counts".
type Named interface {
	Name() string
}

// Concurrent is implemented by backing maps that say whether their
// methods may be called from several goroutines at once. Wrappers forward
// the answer of the map they wrap. A map that does not implement it is
// taken as not safe for concurrent use.
type Concurrent interface {
	ConcurrentSafe() bool
}

// Deleter is implemented by backing maps that can delete keys. After
// MultiDelete the keys are absent, as if never written; keys that were
// absent stay absent, and a repeated key is deleted once. The contract of
// MultiPut holds otherwise: no keys is a no-op, a failed call may have
// deleted any subset, ctx is checked, a fenced store fences deletes as it
// fences writes (an older owner's delete never removes a newer owner's
// write), and retryable errors are marked. A wrapper whose wrapped map
// cannot delete returns ErrNoDelete and changes nothing.
//
// The map flavours use it where removing cannot be undone by a replay: the
// non-transactional map deletes keys, and the opaque and transactional maps
// delete their tombstones once no replay can need them (see Remover).
type Deleter interface {
	MultiDelete(ctx context.Context, keys []Key) error
}

// ErrNoDelete is returned by MultiDelete of a wrapper around a backing map
// that cannot delete.
var ErrNoDelete = errors.New("state: backing map cannot delete keys")

// DeleteForwarder is implemented by wrappers that are Deleters only if
// the map they wrap is: CanDelete forwards the wrapped map's answer, as
// ConcurrentSafe does.
type DeleteForwarder interface {
	CanDelete() bool
}

// CanDelete reports whether m can delete keys: it is a Deleter and, if it
// is a DeleteForwarder, says so.
func CanDelete(m any) bool {
	if _, ok := m.(Deleter); !ok {
		return false
	}
	f, ok := m.(DeleteForwarder)
	return !ok || f.CanDelete()
}

// Delete deletes keys from m if it can delete, and reports whether it
// could: false (with a nil error) when CanDelete(m) is false or m
// answered ErrNoDelete.
func Delete(ctx context.Context, m any, keys []Key) (bool, error) {
	if !CanDelete(m) {
		return false, nil
	}
	d := m.(Deleter)
	err := d.MultiDelete(ctx, keys)
	if errors.Is(err, ErrNoDelete) {
		return false, nil
	}
	return err == nil, err
}

// NameOf returns m's name if it implements Named, else its Go type.
func NameOf(m any) string {
	if n, ok := m.(Named); ok {
		return n.Name()
	}
	return fmt.Sprintf("%T", m)
}

// IsConcurrent reports whether m says it is safe for concurrent use.
func IsConcurrent(m any) bool {
	c, ok := m.(Concurrent)
	return ok && c.ConcurrentSafe()
}

// Close closes m if it implements io.Closer, and does nothing otherwise.
func Close(m any) error {
	if c, ok := m.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
