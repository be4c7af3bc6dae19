package state

import (
	"context"
	"errors"
	"fmt"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/txn"
)

// Sentinel errors of the state layer. Typed errors below match them with
// errors.Is.
var (
	// ErrBadKey: a key value has no stable encoding, or stored key bytes
	// are not a canonical key.
	ErrBadKey = errors.New("state: invalid key")
	// ErrLength: keys and values (or updaters) differ in length.
	ErrLength = errors.New("state: keys and values differ in length")
	// ErrNoTxID: a transactional update outside a commit (txid 0).
	ErrNoTxID = errors.New("state: update outside a commit")
	// ErrNotBegun: Commit with a txid other than the one begun.
	ErrNotBegun = errors.New("state: commit does not match BeginCommit")
	// ErrBehind: the stored value was written by a later batch than the
	// one being applied. Matched by *BehindError.
	ErrBehind = errors.New("state: batch is behind the stored state")
	// ErrCorrupt: a stored value cannot be decoded. Matched by
	// *DecodeError.
	ErrCorrupt = errors.New("state: stored value cannot be decoded")
	// ErrClosed: the backing map has been closed.
	ErrClosed = errors.New("state: backing map is closed")
	// ErrBadValue: a codec produced bytes that are not one msgpack value.
	ErrBadValue = errors.New("state: encoded value is not a single msgpack value")
)

// MapError is a failed call to a backing map, with the context needed to
// find it in logs: which map, which operation, how many keys. It keeps the
// cause's failure kind (see package failure): a retryable cause stays
// retryable.
type MapError struct {
	Map  string // the backing map's name (see Named)
	Op   string // "get" or "put"
	Keys int    // number of keys in the call
	Err  error
}

func (e *MapError) Error() string {
	return fmt.Sprintf("state: %s: %s of %d keys: %v", e.Map, e.Op, e.Keys, e.Err)
}

// Unwrap returns the cause.
func (e *MapError) Unwrap() error { return e.Err }

// WrapBackingError wraps an error returned by a backing map in a MapError.
// A context error that the map did not classify is marked retryable: the
// batch was interrupted, not broken. It returns nil for a nil err.
func WrapBackingError(mapName, op string, keys int, err error) error {
	if err == nil {
		return nil
	}
	err = &MapError{Map: mapName, Op: op, Keys: keys, Err: err}
	return Transient(err)
}

// Transient marks err as an outage (failure.Unavailable: retryable, not
// counted by attempt limits) when it is a context cancellation or deadline
// and nothing in its chain has classified it yet. Backing maps use it on
// the errors they return.
func Transient(err error) error {
	if err == nil {
		return nil
	}
	var fe *failure.Error
	if errors.As(err, &fe) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return failure.Unavailable(err)
	}
	return err
}

// DecodeError is a stored value that cannot be decoded. It is never read
// as an absent value: the state layer returns it marked as a reported
// failure (failure.Reported), so the batch fails and operators see which
// key of which map is damaged.
type DecodeError struct {
	Map string
	Key Key
	Raw []byte // the bytes that could not be decoded, when known
	Err error
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("state: %s: stored value of key %v cannot be decoded: %v", e.Map, e.Key, e.Err)
}

// Unwrap returns the cause.
func (e *DecodeError) Unwrap() error { return e.Err }

// Is matches ErrCorrupt.
func (e *DecodeError) Is(target error) bool { return target == ErrCorrupt }

// Corrupt returns the reported failure for an undecodable stored value.
func Corrupt(mapName string, key Key, err error) error {
	return failure.Reported(&DecodeError{Map: mapName, Key: key, Err: err})
}

// CorruptHandler decides what becomes of a stored value that cannot be
// decoded. Returning nil treats the key as absent: the handler has kept
// the bytes somewhere (e.Raw), and the next write of the key replaces
// them. Returning an error fails the call with it. The handler is called
// with the call's ctx, from the goroutine making the call.
type CorruptHandler func(ctx context.Context, e *DecodeError) error

// CorruptHandling is implemented by the map states that can hand the
// values they cannot decode to a CorruptHandler (the opaque,
// transactional and non-transactional maps). Without a handler, an
// undecodable value fails the call with Corrupt's error.
type CorruptHandling interface {
	SetCorruptHandler(h CorruptHandler)
}

// BehindError is a stored value written by batch Stored met by the earlier
// batch Batch. Txids only grow, so this means the store belongs to another
// stream (for example a topology redeployed with txids restarting at 1).
// Overwriting would silently corrupt the data, so this error is fatal: it
// is not wrapped by the failure package.
type BehindError struct {
	Map    string // empty when not known
	Key    Key
	Batch  txn.TxID
	Stored txn.TxID
}

func (e *BehindError) Error() string {
	if e.Map == "" {
		return fmt.Sprintf("state: current batch %v is behind the stored batch %v", e.Batch, e.Stored)
	}
	return fmt.Sprintf("state: %s: key %v: current batch %v is behind the stored batch %v",
		e.Map, e.Key, e.Batch, e.Stored)
}

// Is matches ErrBehind.
func (e *BehindError) Is(target error) bool { return target == ErrBehind }
