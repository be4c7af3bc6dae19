// Package boltwindows is a windowstore.Store in a bbolt file: the records
// of Trident windows on the local disk, for a topology that must survive
// a process restart without Cassandra. Each window task has a bucket of
// its own; records are keyed by their txid, big-endian, so Last is a
// cursor seek. A Put and its pruning are one bbolt transaction.
package boltwindows

import (
	"bytes"
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
	"github.com/squallstream/squall/trident/windowstore"
	"github.com/squallstream/squall/txn"
)

// rootBucket holds one nested bucket per window task id.
var rootBucket = []byte("windows")

// Options configures Open. The zero value is valid.
type Options struct {
	// LockTimeout bounds the wait for the file lock held by another
	// process. Zero means one second.
	LockTimeout time.Duration
	// FileMode is the permission of a new file. Zero means 0600.
	FileMode os.FileMode
}

// Store is a windowstore.Store in a bbolt file. Close it when done.
type Store struct {
	mu     sync.RWMutex // write-locked by Close; read-locked by every call
	db     *bolt.DB
	closed bool
}

var _ windowstore.Store = (*Store)(nil)

// Open opens (creating if needed) the store in the file at path. A lock
// timeout or an I/O error is retryable.
func Open(path string, opts Options) (*Store, error) {
	timeout := opts.LockTimeout
	if timeout == 0 {
		timeout = time.Second
	}
	mode := opts.FileMode
	if mode == 0 {
		mode = 0o600
	}
	db, err := bolt.Open(path, mode, &bolt.Options{Timeout: timeout})
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return nil, failure.Retryable(fmt.Errorf("boltwindows: open %s: file locked by another process: %w", path, err))
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrChecksum), errors.Is(err, berrors.ErrVersionMismatch):
		return nil, fmt.Errorf("boltwindows: open %s: not a valid store: %w", path, err)
	case err != nil:
		return nil, failure.Retryable(fmt.Errorf("boltwindows: open %s: %w", path, err))
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(rootBucket)
		return err
	}); err != nil {
		db.Close()
		return nil, fmt.Errorf("boltwindows: open %s: %w", path, err)
	}
	return &Store{db: db}, nil
}

// Close closes the file; later calls fail.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return s.db.Close()
}

func (s *Store) run(ctx context.Context, write bool, fn func(root *bolt.Bucket) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return errors.New("boltwindows: store closed")
	}
	do := s.db.View
	if write {
		do = s.db.Update
	}
	return do(func(tx *bolt.Tx) error {
		root := tx.Bucket(rootBucket)
		if root == nil {
			return errors.New("boltwindows: missing root bucket")
		}
		return fn(root)
	})
}

func txKey(t txn.TxID) []byte { return binary.BigEndian.AppendUint64(nil, uint64(t)) }

// Get implements windowstore.Store.
func (s *Store) Get(ctx context.Context, id string, txid txn.TxID) ([]byte, error) {
	var out []byte
	err := s.run(ctx, false, func(root *bolt.Bucket) error {
		b := root.Bucket([]byte(id))
		if b == nil {
			return windowstore.ErrNotFound
		}
		v := b.Get(txKey(txid))
		if v == nil {
			return windowstore.ErrNotFound
		}
		out = bytes.Clone(v)
		return nil
	})
	return out, err
}

// Last implements windowstore.Store.
func (s *Store) Last(ctx context.Context, id string, before txn.TxID) (txn.TxID, []byte, error) {
	var (
		got txn.TxID
		out []byte
	)
	err := s.run(ctx, false, func(root *bolt.Bucket) error {
		b := root.Bucket([]byte(id))
		if b == nil {
			return windowstore.ErrNotFound
		}
		c := b.Cursor()
		k, _ := c.Seek(txKey(before))
		var v []byte
		if k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
		if k == nil {
			return windowstore.ErrNotFound
		}
		got, out = txn.TxID(binary.BigEndian.Uint64(k)), bytes.Clone(v)
		return nil
	})
	return got, out, err
}

// Put implements windowstore.Store: the record and the pruning are one
// transaction.
func (s *Store) Put(ctx context.Context, id string, txid txn.TxID, record []byte, prune txn.TxID) error {
	return s.run(ctx, true, func(root *bolt.Bucket) error {
		b, err := root.CreateBucketIfNotExists([]byte(id))
		if err != nil {
			return err
		}
		if err := b.Put(txKey(txid), bytes.Clone(record)); err != nil {
			return err
		}
		c := b.Cursor()
		for k, _ := c.First(); k != nil && binary.BigEndian.Uint64(k) < uint64(prune); k, _ = c.Next() {
			if err := c.Delete(); err != nil {
				return err
			}
		}
		return nil
	})
}

// Remove implements windowstore.Store: the id's bucket is deleted.
func (s *Store) Remove(ctx context.Context, id string) error {
	return s.run(ctx, true, func(root *bolt.Bucket) error {
		err := root.DeleteBucket([]byte(id))
		if errors.Is(err, berrors.ErrBucketNotFound) {
			return nil
		}
		return err
	})
}
