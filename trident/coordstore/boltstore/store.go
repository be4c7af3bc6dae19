package boltstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/txn"
)

var (
	coordBucket = []byte("coordinator")
	metaBucket  = []byte("meta")
	ownerBucket = []byte("owners")
)

// Options configures Open. The zero value is valid.
type Options struct {
	// LockTimeout bounds the wait for the file lock held by another
	// process that has the file open; the context's deadline bounds it too.
	// Zero means one second.
	LockTimeout time.Duration
	// FileMode is the permission of a new file. Zero means 0600.
	FileMode os.FileMode
	// NoSync skips the fsync of every commit. What a process wrote
	// survives that process's crash (the system's page cache keeps it),
	// not a crash of the machine, which may lose the last commits or
	// corrupt the file. For tests of processes and for data that can be
	// thrown away; never for a coordination store that must survive a
	// power loss.
	NoSync bool
}

// Store is a coordstore.Store in a bbolt file.
type Store struct {
	path   string
	mu     sync.RWMutex // write-locked by Close; read-locked by every call
	db     *bolt.DB
	closed bool

	gmu   sync.Mutex // guards group
	group group      // the writes committing together
}

var _ coordstore.Store = (*Store)(nil)

// Open opens (creating if needed) the store in the file at path. A file
// that is not a valid store gives an error matching coordstore.ErrCorrupt;
// a lock timeout or an I/O error gives a retryable one.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	timeout := opts.LockTimeout
	if timeout == 0 {
		timeout = time.Second
	}
	if d, ok := ctx.Deadline(); ok && time.Until(d) < timeout {
		timeout = max(time.Until(d), time.Millisecond)
	}
	mode := opts.FileMode
	if mode == 0 {
		mode = 0o600
	}
	db, err := bolt.Open(path, mode, &bolt.Options{Timeout: timeout, NoSync: opts.NoSync})
	switch {
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrChecksum), errors.Is(err, berrors.ErrVersionMismatch):
		return nil, &coordstore.CorruptError{Where: path, Err: err}
	case errors.Is(err, berrors.ErrTimeout):
		return nil, failure.Retryable(fmt.Errorf("boltstore: open %s: file locked by another process: %w", path, err))
	case err != nil:
		return nil, failure.Retryable(fmt.Errorf("boltstore: open %s: %w", path, err))
	}
	s := &Store{path: path, db: db}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{coordBucket, metaBucket, ownerBucket} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return s.corrupt(fmt.Sprintf("bucket %q", name), err)
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, s.wrap("open", err)
	}
	return s, nil
}

// Path returns the file's path.
func (s *Store) Path() string { return s.path }

// Close implements coordstore.Store. It waits for calls in progress.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if err := s.db.Close(); err != nil {
		return failure.Retryable(fmt.Errorf("boltstore: close %s: %w", s.path, err))
	}
	return nil
}

func (s *Store) corrupt(where string, err error) error {
	return &coordstore.CorruptError{Where: s.path + ": " + where, Err: err}
}

// wrap classifies an error from a bbolt call: the store's own errors pass
// through, anything else is an I/O error and retryable.
func (s *Store) wrap(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, coordstore.ErrConflict), errors.Is(err, coordstore.ErrCorrupt),
		errors.Is(err, coordstore.ErrInvalid), errors.Is(err, coordstore.ErrClosed),
		errors.Is(err, coordstore.ErrFenced):
		return err
	case errors.Is(err, berrors.ErrDatabaseNotOpen):
		return coordstore.ErrClosed
	case errors.Is(err, berrors.ErrValueTooLarge), errors.Is(err, berrors.ErrKeyTooLarge):
		return fmt.Errorf("%w: %s: %v", coordstore.ErrInvalid, op, err)
	}
	return failure.Retryable(fmt.Errorf("boltstore: %s %s: %w", op, s.path, err))
}

// view and update run fn in a read or write transaction after checking the
// context and that the store is open.
func (s *Store) view(ctx context.Context, op string, fn func(*bolt.Tx) error) error {
	return s.run(ctx, op, false, fn)
}

func (s *Store) update(ctx context.Context, op string, fn func(*bolt.Tx) error) error {
	return s.run(ctx, op, true, fn)
}

func (s *Store) run(ctx context.Context, op string, write bool, fn func(*bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return coordstore.ErrClosed
	}
	var err error
	if write {
		err = s.commit(fn)
	} else {
		err = s.db.View(fn)
	}
	return s.wrap(op, err)
}

// Acquire implements coordstore.Store.
func (s *Store) Acquire(ctx context.Context, owner string) (coordstore.Generation, error) {
	if err := coordstore.ValidateStream(owner); err != nil {
		return 0, err
	}
	var gen coordstore.Generation
	err := s.update(ctx, "acquire", func(tx *bolt.Tx) error {
		cur, err := s.generation(tx, owner)
		if err != nil {
			return err
		}
		gen = cur + 1
		return tx.Bucket(ownerBucket).Put([]byte(owner), frame(binary.BigEndian.AppendUint64(nil, uint64(gen))))
	})
	return gen, err
}

// Generation implements coordstore.Store.
func (s *Store) Generation(ctx context.Context, owner string) (coordstore.Generation, error) {
	if err := coordstore.ValidateStream(owner); err != nil {
		return 0, err
	}
	var gen coordstore.Generation
	err := s.view(ctx, "generation", func(tx *bolt.Tx) error {
		var err error
		gen, err = s.generation(tx, owner)
		return err
	})
	return gen, err
}

// generation reads owner's newest generation in tx.
func (s *Store) generation(tx *bolt.Tx, owner string) (coordstore.Generation, error) {
	b := tx.Bucket(ownerBucket)
	if b == nil {
		return 0, s.corrupt("layout", errors.New("bucket \"owners\" missing"))
	}
	raw := b.Get([]byte(owner))
	if raw == nil {
		return 0, nil
	}
	payload, err := unframe(raw)
	if err == nil && len(payload) != 8 {
		err = fmt.Errorf("generation of %d bytes", len(payload))
	}
	if err != nil {
		return 0, s.corrupt(fmt.Sprintf("generation of %q", owner), err)
	}
	return coordstore.Generation(binary.BigEndian.Uint64(payload)), nil
}

// fenced returns the error of a write by f in tx if f is not the newest
// generation of its owner.
func (s *Store) fenced(tx *bolt.Tx, where string, f coordstore.Fence) error {
	cur, err := s.generation(tx, f.Owner)
	if err != nil {
		return err
	}
	if cur != f.Generation {
		return coordstore.Fenced(where, f, cur)
	}
	return nil
}

// LoadCoordinator implements coordstore.Store.
func (s *Store) LoadCoordinator(ctx context.Context, stream string) (coordstore.Record, coordstore.Version, error) {
	if err := coordstore.ValidateStream(stream); err != nil {
		return coordstore.Record{}, 0, err
	}
	var (
		r coordstore.Record
		v coordstore.Version
	)
	err := s.view(ctx, "load coordinator", func(tx *bolt.Tx) error {
		var err error
		v, r, err = s.record(tx, stream)
		return err
	})
	return r, v, err
}

// record reads stream's record in tx.
func (s *Store) record(tx *bolt.Tx, stream string) (coordstore.Version, coordstore.Record, error) {
	b := tx.Bucket(coordBucket)
	if b == nil {
		return 0, coordstore.Record{}, s.corrupt("layout", errors.New("bucket \"coordinator\" missing"))
	}
	raw := b.Get([]byte(stream))
	if raw == nil {
		return 0, coordstore.Record{}, nil
	}
	where := fmt.Sprintf("coordinator record of stream %q", stream)
	payload, err := unframe(raw)
	if err != nil {
		return 0, coordstore.Record{}, s.corrupt(where, err)
	}
	v, r, err := decodeRecord(payload)
	if err != nil {
		return 0, coordstore.Record{}, s.corrupt(where, err)
	}
	return v, r, nil
}

// SwapCoordinator implements coordstore.Store.
func (s *Store) SwapCoordinator(ctx context.Context, f coordstore.Fence, old coordstore.Version, rec coordstore.Record) (coordstore.Version, error) {
	if err := coordstore.ValidateFence(f); err != nil {
		return 0, err
	}
	var v coordstore.Version
	err := s.update(ctx, "swap coordinator", func(tx *bolt.Tx) error {
		if err := s.fenced(tx, "coordinator of "+f.Owner, f); err != nil {
			return err
		}
		cur, _, err := s.record(tx, f.Owner)
		if err != nil {
			return err
		}
		if cur != old {
			return &coordstore.ConflictError{Stream: f.Owner, Want: old, Have: cur}
		}
		v = cur + 1
		return tx.Bucket(coordBucket).Put([]byte(f.Owner), frame(encodeRecord(v, rec)))
	})
	if err != nil {
		return 0, err
	}
	return v, nil
}

// partition returns k's bucket, or nil if it has none; create makes it.
func (s *Store) partition(tx *bolt.Tx, k coordstore.Key, create bool) (*bolt.Bucket, error) {
	root := tx.Bucket(metaBucket)
	if root == nil {
		return nil, s.corrupt("layout", errors.New("bucket \"meta\" missing"))
	}
	if !create {
		ob := root.Bucket([]byte(k.Owner))
		if ob == nil {
			return nil, nil
		}
		sb := ob.Bucket([]byte(k.Stream))
		if sb == nil {
			return nil, nil
		}
		return sb.Bucket([]byte(k.Partition)), nil
	}
	ob, err := root.CreateBucketIfNotExists([]byte(k.Owner))
	if err != nil {
		return nil, s.corrupt(fmt.Sprintf("meta bucket of owner %q", k.Owner), err)
	}
	sb, err := ob.CreateBucketIfNotExists([]byte(k.Stream))
	if err != nil {
		return nil, s.corrupt(fmt.Sprintf("meta bucket of stream %q", k.Stream), err)
	}
	pb, err := sb.CreateBucketIfNotExists([]byte(k.Partition))
	if err != nil {
		return nil, s.corrupt("meta bucket of "+k.String(), err)
	}
	return pb, nil
}

// entry decodes one stored entry.
func (s *Store) entry(k coordstore.Key, key, raw []byte) (coordstore.Entry, error) {
	txid, err := keyTx(key)
	if err != nil {
		return coordstore.Entry{}, s.corrupt("meta of "+k.String(), err)
	}
	if raw == nil {
		return coordstore.Entry{}, s.corrupt(fmt.Sprintf("meta of %s txid %d", k, txid), errors.New("a bucket where an entry belongs"))
	}
	v, err := unframe(raw)
	if err != nil {
		return coordstore.Entry{}, s.corrupt(fmt.Sprintf("meta of %s txid %d", k, txid), err)
	}
	return coordstore.Entry{TxID: txid, Value: v}, nil
}

// GetMeta implements coordstore.Store.
func (s *Store) GetMeta(ctx context.Context, k coordstore.Key, txid txn.TxID) ([]byte, bool, error) {
	if err := k.Validate(); err != nil {
		return nil, false, err
	}
	var (
		v  []byte
		ok bool
	)
	err := s.view(ctx, "get meta", func(tx *bolt.Tx) error {
		b, err := s.partition(tx, k, false)
		if b == nil || err != nil {
			return err
		}
		key := txKey(txid)
		raw := b.Get(key)
		if raw == nil {
			return nil
		}
		e, err := s.entry(k, key, raw)
		v, ok = e.Value, err == nil
		return err
	})
	return v, ok, err
}

// PrevMeta implements coordstore.Store.
func (s *Store) PrevMeta(ctx context.Context, k coordstore.Key, txid txn.TxID) (coordstore.Entry, bool, error) {
	if err := k.Validate(); err != nil {
		return coordstore.Entry{}, false, err
	}
	var (
		e  coordstore.Entry
		ok bool
	)
	err := s.view(ctx, "prev meta", func(tx *bolt.Tx) error {
		b, err := s.partition(tx, k, false)
		if b == nil || err != nil {
			return err
		}
		c := b.Cursor()
		key, _ := c.Seek(txKey(txid))
		var raw []byte
		if key == nil {
			key, raw = c.Last()
		} else {
			key, raw = c.Prev()
		}
		if key == nil {
			return nil
		}
		e, err = s.entry(k, key, raw)
		ok = err == nil
		return err
	})
	return e, ok, err
}

// writeMeta validates a metadata write of k by generation gen and runs fn
// in a write transaction that first checks gen is the owner's newest.
func (s *Store) writeMeta(ctx context.Context, op string, gen coordstore.Generation, k coordstore.Key, fn func(*bolt.Tx) error) error {
	if err := k.Validate(); err != nil {
		return err
	}
	f := k.Fence(gen)
	if err := coordstore.ValidateFence(f); err != nil {
		return err
	}
	return s.update(ctx, op, func(tx *bolt.Tx) error {
		if err := s.fenced(tx, "meta of "+k.String(), f); err != nil {
			return err
		}
		return fn(tx)
	})
}

// PutMeta implements coordstore.Store.
func (s *Store) PutMeta(ctx context.Context, gen coordstore.Generation, k coordstore.Key, txid txn.TxID, value []byte) error {
	if err := coordstore.ValidateTxID(txid); err != nil {
		return err
	}
	return s.writeMeta(ctx, "put meta", gen, k, func(tx *bolt.Tx) error {
		b, err := s.partition(tx, k, true)
		if err != nil {
			return err
		}
		return b.Put(txKey(txid), frame(value))
	})
}

// RemoveMeta implements coordstore.Store.
func (s *Store) RemoveMeta(ctx context.Context, gen coordstore.Generation, k coordstore.Key, txid txn.TxID) error {
	return s.writeMeta(ctx, "remove meta", gen, k, func(tx *bolt.Tx) error {
		b, err := s.partition(tx, k, false)
		if b == nil || err != nil {
			return err
		}
		return b.Delete(txKey(txid))
	})
}

// CleanupMetaBefore implements coordstore.Store.
func (s *Store) CleanupMetaBefore(ctx context.Context, gen coordstore.Generation, k coordstore.Key, txid txn.TxID) error {
	return s.writeMeta(ctx, "cleanup meta", gen, k, func(tx *bolt.Tx) error {
		b, err := s.partition(tx, k, false)
		if b == nil || err != nil {
			return err
		}
		// Collect first: deleting under a cursor can skip keys.
		var doomed [][]byte
		c := b.Cursor()
		bound := txKey(txid)
		for key, _ := c.First(); key != nil && string(key) < string(bound); key, _ = c.Next() {
			doomed = append(doomed, append([]byte{}, key...))
		}
		for _, key := range doomed {
			if err := b.Delete(key); err != nil {
				return err
			}
		}
		return nil
	})
}
