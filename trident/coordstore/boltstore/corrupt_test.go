package boltstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/trident/coordstore"
)

var key = coordstore.Key{Owner: "s", Stream: "s", Partition: "p"}

// owner is the fence of the only generation damaged acquires.
var owner = coordstore.Fence{Owner: "s", Generation: 1}

// damaged creates a store with one record and one entry, then lets mutate
// change the raw file through bbolt, and reopens it.
func damaged(t *testing.T, mutate func(tx *bolt.Tx) error) *Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "coord.db")
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Acquire(t.Context(), "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SwapCoordinator(t.Context(), owner, 0, coordstore.Record{Committed: 4}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutMeta(t.Context(), owner.Generation, key, 5, []byte("offsets")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(mutate); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(t.Context(), path, Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func wantCorrupt(t *testing.T, err error, detail string) {
	t.Helper()
	if !errors.Is(err, coordstore.ErrCorrupt) || failure.IsRetryable(err) {
		t.Fatalf("got %v, want a fatal ErrCorrupt", err)
	}
	if !strings.Contains(err.Error(), detail) {
		t.Fatalf("error %q does not say %q", err, detail)
	}
}

func record(tx *bolt.Tx) []byte { return tx.Bucket(coordBucket).Get([]byte("s")) }

func TestCorruptRecord(t *testing.T) {
	for _, c := range []struct {
		name, detail string
		value        func(old []byte) []byte
	}{
		{"flipped bit", "checksum mismatch", func(old []byte) []byte {
			b := append([]byte{}, old...)
			b[len(b)-1] ^= 1
			return b
		}},
		{"unknown format", "unknown value format 9", func(old []byte) []byte {
			b := append([]byte{}, old...)
			b[0] = 9
			return b
		}},
		{"short", "shorter than its header", func([]byte) []byte { return []byte{1, 2} }},
		{"trailing bytes", "bytes after the record", func(old []byte) []byte {
			p, _ := unframe(old)
			return frame(append(p, 0))
		}},
		{"truncated", "truncated", func(old []byte) []byte {
			p, _ := unframe(old)
			return frame(p[:1])
		}},
		{"version zero", "version 0", func([]byte) []byte {
			return frame(encodeRecord(0, coordstore.Record{Committed: 1}))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := damaged(t, func(tx *bolt.Tx) error {
				return tx.Bucket(coordBucket).Put([]byte("s"), c.value(record(tx)))
			})
			_, _, err := s.LoadCoordinator(t.Context(), "s")
			wantCorrupt(t, err, c.detail)
			wantCorrupt(t, err, `stream "s"`)
			_, err = s.SwapCoordinator(t.Context(), owner, 1, coordstore.Record{})
			wantCorrupt(t, err, c.detail)
		})
	}
}

func TestCorruptMeta(t *testing.T) {
	part := func(tx *bolt.Tx) *bolt.Bucket {
		return tx.Bucket(metaBucket).Bucket([]byte("s")).Bucket([]byte("s")).Bucket([]byte("p"))
	}
	t.Run("flipped bit", func(t *testing.T) {
		s := damaged(t, func(tx *bolt.Tx) error {
			b := part(tx)
			v := append([]byte{}, b.Get(txKey(5))...)
			v[6] ^= 0x80
			return b.Put(txKey(5), v)
		})
		_, _, err := s.GetMeta(t.Context(), key, 5)
		wantCorrupt(t, err, "meta of s/s/p txid 5: checksum mismatch")
		_, _, err = s.PrevMeta(t.Context(), key, 6)
		wantCorrupt(t, err, "checksum mismatch")
	})
	t.Run("bad key", func(t *testing.T) {
		s := damaged(t, func(tx *bolt.Tx) error { return part(tx).Put([]byte("xyz"), frame(nil)) })
		_, _, err := s.PrevMeta(t.Context(), key, coordstore.MaxTxID)
		wantCorrupt(t, err, "meta key of 3 bytes")
	})
	t.Run("bucket for entry", func(t *testing.T) {
		s := damaged(t, func(tx *bolt.Tx) error {
			_, err := part(tx).CreateBucket(txKey(7))
			return err
		})
		_, _, err := s.PrevMeta(t.Context(), key, coordstore.MaxTxID)
		wantCorrupt(t, err, "a bucket where an entry belongs")
	})
}

func TestOpenNotAStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "coord.db")
	if err := os.WriteFile(path, []byte(strings.Repeat("not a bolt file ", 1024)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(t.Context(), path, Options{})
	wantCorrupt(t, err, path)
}

func TestOpenErrorsRetryable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "coord.db")
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The file is locked by the first store.
	start := time.Now()
	_, err = Open(t.Context(), path, Options{LockTimeout: 50 * time.Millisecond})
	if !failure.IsRetryable(err) || !strings.Contains(err.Error(), "locked") {
		t.Fatalf("second Open = %v, want a retryable lock error", err)
	}
	// A context deadline shortens the wait.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, err = Open(ctx, path, Options{LockTimeout: time.Minute}); !failure.IsRetryable(err) || time.Since(start) > 10*time.Second {
		t.Fatalf("Open with a deadline = %v after %v", err, time.Since(start))
	}
	// A directory that does not exist.
	_, err = Open(t.Context(), filepath.Join(t.TempDir(), "missing", "coord.db"), Options{})
	if !failure.IsRetryable(err) || errors.Is(err, coordstore.ErrCorrupt) {
		t.Fatalf("Open in a missing directory = %v, want a retryable error", err)
	}
	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err = Open(canceled, path, Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Open with a canceled context = %v", err)
	}
}

func TestWrapClassifies(t *testing.T) {
	s := &Store{path: "f"}
	io := errors.New("input/output error")
	if err := s.wrap("put meta", io); !failure.IsRetryable(err) || !errors.Is(err, io) {
		t.Errorf("I/O error wrapped as %v", err)
	}
	conflict := &coordstore.ConflictError{Stream: "s"}
	if err := s.wrap("swap", conflict); err != conflict {
		t.Errorf("conflict wrapped as %v", err)
	}
}
