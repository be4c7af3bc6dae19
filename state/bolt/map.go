package bolt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"

	bbolt "go.etcd.io/bbolt"
	bberrors "go.etcd.io/bbolt/errors"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/state"
)

// ctxCheckEvery is how many keys a call handles between context checks.
const ctxCheckEvery = 256

// Map is a backing map in one bucket of a bbolt file. It is safe for
// concurrent use.
type Map struct {
	db     *bbolt.DB
	bucket []byte
	name   string
	ownsDB bool
	closed atomic.Bool
	// release, if set, gives the map's reference to a shared file back
	// (OpenShared) instead of closing the file.
	release func() error
}

var (
	_ state.BackingMap[[]byte] = (*Map)(nil)
	_ state.Concurrent         = (*Map)(nil)
	_ state.Named              = (*Map)(nil)
	_ state.Deleter            = (*Map)(nil)
)

// Open opens (creating if needed) the bbolt file at path and the map's
// bucket in it. Close releases the file.
func Open(path string, opts Options) (*Map, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	mode := os.FileMode(opts.Mode)
	if mode == 0 {
		mode = 0o600
	}
	db, err := bbolt.Open(path, mode, &bbolt.Options{Timeout: opts.lockTimeout(), NoSync: opts.NoSync})
	if err != nil {
		return nil, fmt.Errorf("bolt: open %s: %w", path, err)
	}
	m, err := newMap(db, opts.bucket())
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	m.ownsDB = true
	return m, nil
}

// New returns a map in the named bucket of an already open database, for
// several maps sharing one file. Close on such a map does not close db.
func New(db *bbolt.DB, bucket string) (*Map, error) {
	if err := (Options{Bucket: bucket}).Validate(); err != nil {
		return nil, err
	}
	return newMap(db, Options{Bucket: bucket}.bucket())
}

func newMap(db *bbolt.DB, bucket []byte) (*Map, error) {
	m := &Map{db: db, bucket: bucket, name: fmt.Sprintf("bolt %s bucket %s", db.Path(), bucket)}
	if !db.IsReadOnly() {
		err := db.Update(func(tx *bbolt.Tx) error {
			_, err := tx.CreateBucketIfNotExists(bucket)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("bolt: %s: create bucket: %w", m.name, err)
		}
	}
	return m, nil
}

// MultiGet reads the keys in one read-only transaction.
func (m *Map) MultiGet(ctx context.Context, keys []state.Key) ([]state.Entry[[]byte], error) {
	if m.closed.Load() {
		return nil, fmt.Errorf("bolt: %s: get: %w", m.name, state.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return nil, m.classify("get", err)
	}
	out := make([]state.Entry[[]byte], len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	err := m.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(m.bucket)
		if b == nil {
			return bberrors.ErrBucketNotFound
		}
		c := b.Cursor()
		for i, k := range keys {
			if i%ctxCheckEvery == ctxCheckEvery-1 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			enc := []byte(k.Encoded())
			// A cursor tells presence by key, whatever the value (an empty
			// value is present).
			if got, v := c.Seek(enc); got != nil && bytes.Equal(got, enc) {
				// Values are only valid inside the transaction.
				out[i] = state.Entry[[]byte]{Val: append(make([]byte, 0, len(v)), v...), Found: true}
			}
		}
		return nil
	})
	if err != nil {
		return nil, m.classify("get", err)
	}
	return out, nil
}

// Admit records the fence ctx carries (see state.WithFence) in the file
// (FenceBucket): from then on, writes of older generations of its owner to
// this bucket are rejected, by this process or any later one. A
// BackingFactory over a bolt map calls it when it opens the map for an
// owner (as trident.BoltBacking does); otherwise the owner's first write
// admits it. Without a fence in ctx it does nothing.
func (m *Map) Admit(ctx context.Context) error {
	if _, ok := state.FenceOf(ctx); !ok {
		return nil
	}
	if m.closed.Load() {
		return fmt.Errorf("bolt: %s: admit: %w", m.name, state.ErrClosed)
	}
	err := m.db.Update(func(tx *bbolt.Tx) error { return admitTx(ctx, tx, m.bucket, m.name) })
	if err != nil {
		return m.classify("admit", err)
	}
	return nil
}

// MultiPut writes the keys in one read-write transaction: all or none. A
// write whose context carries the fence of a superseded owner (see
// state.WithFence) fails with a *state.FencedError and writes nothing.
func (m *Map) MultiPut(ctx context.Context, keys []state.Key, vals [][]byte) error {
	if len(keys) != len(vals) {
		return state.ErrLength
	}
	return m.update(ctx, "put", keys, func(b *bbolt.Bucket, i int, k []byte) error {
		v := vals[i]
		if v == nil {
			v = []byte{}
		}
		return b.Put(k, v)
	})
}

// MultiDelete deletes the keys in one read-write transaction: all or none.
// It is fenced like MultiPut.
func (m *Map) MultiDelete(ctx context.Context, keys []state.Key) error {
	return m.update(ctx, "delete", keys, func(b *bbolt.Bucket, _ int, k []byte) error { return b.Delete(k) })
}

// update applies write to each key in one read-write transaction, fenced:
// the owner's generation is admitted in the transaction, so no write of
// an older generation can commit after one of a newer generation was
// admitted. A caller that gives up (ctx) rolls the transaction back.
func (m *Map) update(ctx context.Context, op string, keys []state.Key, write func(b *bbolt.Bucket, i int, key []byte) error) error {
	if m.closed.Load() {
		return fmt.Errorf("bolt: %s: %s: %w", m.name, op, state.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return m.classify(op, err)
	}
	if len(keys) == 0 {
		return nil
	}
	err := m.db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(m.bucket)
		if b == nil {
			return bberrors.ErrBucketNotFound
		}
		if err := admitTx(ctx, tx, m.bucket, m.name); err != nil {
			return err
		}
		for i, k := range keys {
			if i%ctxCheckEvery == ctxCheckEvery-1 {
				if err := ctx.Err(); err != nil {
					return err // rolls the transaction back
				}
			}
			if err := write(b, i, []byte(k.Encoded())); err != nil {
				return fmt.Errorf("key %v: %w", k, err)
			}
		}
		// Last check: a write whose caller gave up is not committed.
		return ctx.Err()
	})
	if err != nil {
		return m.classify(op, err)
	}
	return nil
}

// classify marks err for the runtime and adds the map's name.
func (m *Map) classify(op string, err error) error {
	wrapped := fmt.Errorf("bolt: %s: %s: %w", m.name, op, err)
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return failure.Retryable(wrapped)
	case errors.Is(err, bberrors.ErrDatabaseNotOpen), errors.Is(err, bberrors.ErrTxClosed):
		return fmt.Errorf("bolt: %s: %s: %w (%w)", m.name, op, state.ErrClosed, err)
	case isMisuse(err), errors.Is(err, state.ErrFenced):
		return wrapped
	default:
		// Failures to write or sync the file: the disk may recover (space
		// freed, transient I/O error) and the batch is replayed.
		return failure.Retryable(wrapped)
	}
}

// isMisuse reports errors that retrying cannot fix.
func isMisuse(err error) bool {
	for _, e := range []error{
		bberrors.ErrKeyTooLarge, bberrors.ErrValueTooLarge, bberrors.ErrKeyRequired,
		bberrors.ErrBucketNotFound, bberrors.ErrDatabaseReadOnly, bberrors.ErrTxNotWritable,
		bberrors.ErrIncompatibleValue, bberrors.ErrInvalid, bberrors.ErrVersionMismatch,
		bberrors.ErrChecksum,
	} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// Close closes the map, and the file if Open opened it (for a map of
// OpenShared: gives its reference back, closing the file with the last). Later calls fail
// with state.ErrClosed. Closing twice is harmless.
func (m *Map) Close() error {
	if m.closed.Swap(true) {
		return nil
	}
	if m.release != nil {
		return m.release()
	}
	if !m.ownsDB {
		return nil
	}
	return m.db.Close()
}

// Name identifies the map in errors: the file path and bucket.
func (m *Map) Name() string { return m.name }

// ConcurrentSafe reports true: bbolt serializes writers and runs readers
// in parallel.
func (m *Map) ConcurrentSafe() bool { return true }

// DB returns the underlying database, e.g. to open more maps in it with
// New.
func (m *Map) DB() *bbolt.DB { return m.db }
