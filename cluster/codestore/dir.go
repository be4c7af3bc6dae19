package codestore

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Digest is the sha256 of an artifact: its name in every Dir and in etcd.
type Digest [sha256.Size]byte

func (d Digest) String() string { return hex.EncodeToString(d[:]) }

// ParseDigest reads the 64 hex digits String writes.
func ParseDigest(s string) (Digest, error) {
	var d Digest
	if len(s) != 2*len(d) {
		return d, fmt.Errorf("codestore: bad digest %q: want %d hex digits", s, 2*len(d))
	}
	if _, err := hex.Decode(d[:], []byte(s)); err != nil {
		return d, fmt.Errorf("codestore: bad digest %q: %w", s, err)
	}
	return d, nil
}

// ErrMissing: the artifact is not in the Dir. ErrCorrupt: its content does
// not hash to its name (it is removed when found so).
var (
	ErrMissing = errors.New("codestore: artifact missing")
	ErrCorrupt = errors.New("codestore: artifact corrupt")
)

// Dir keeps artifacts in one local directory, each in a file named by its
// digest. A file appears only complete (written to a temporary name, synced,
// then renamed).
type Dir struct{ path string }

// OpenDir creates the directory if needed.
func OpenDir(path string) (*Dir, error) {
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, fmt.Errorf("codestore: %w", err)
	}
	return &Dir{path: path}, nil
}

// Path is where the artifact's file is (whether or not it exists).
func (d *Dir) Path(dg Digest) string { return filepath.Join(d.path, dg.String()) }

// Put stores the content of r and returns its digest.
func (d *Dir) Put(r io.Reader) (Digest, error) { return d.put(r, nil) }

// PutVerified stores the content of r if it hashes to want; otherwise it
// stores nothing and returns an error matching ErrCorrupt.
func (d *Dir) PutVerified(want Digest, r io.Reader) error {
	_, err := d.put(r, &want)
	return err
}

func (d *Dir) put(r io.Reader, want *Digest) (Digest, error) {
	var dg Digest
	f, err := os.CreateTemp(d.path, ".incoming-*")
	if err != nil {
		return dg, fmt.Errorf("codestore: %w", err)
	}
	defer os.Remove(f.Name()) // after the rename: nothing to remove
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(f, h), r); err != nil {
		f.Close()
		return dg, fmt.Errorf("codestore: writing artifact: %w", err)
	}
	h.Sum(dg[:0])
	if want != nil && dg != *want {
		f.Close()
		return dg, fmt.Errorf("%w: got content of sha256 %s, want %s", ErrCorrupt, dg, want)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return dg, fmt.Errorf("codestore: %w", err)
	}
	if err := f.Close(); err != nil {
		return dg, fmt.Errorf("codestore: %w", err)
	}
	if err := os.Rename(f.Name(), d.Path(dg)); err != nil {
		return dg, fmt.Errorf("codestore: %w", err)
	}
	return dg, nil
}

// Open opens a stored artifact for reading.
func (d *Dir) Open(dg Digest) (*os.File, error) {
	f, err := os.Open(d.Path(dg))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrMissing, dg)
	}
	return f, err
}

// Verify hashes the stored artifact again. A missing one gives ErrMissing;
// a corrupt one is removed and gives ErrCorrupt.
func (d *Dir) Verify(dg Digest) error {
	f, err := d.Open(dg)
	if err != nil {
		return err
	}
	h := sha256.New()
	_, err = io.Copy(h, f)
	f.Close()
	if err != nil {
		return fmt.Errorf("codestore: reading %s: %w", dg, err)
	}
	var got Digest
	h.Sum(got[:0])
	if got != dg {
		os.Remove(d.Path(dg))
		return fmt.Errorf("%w: %s hashes to %s; removed", ErrCorrupt, dg, got)
	}
	return nil
}

// Prune removes the stored artifacts that keep does not name and that
// were stored before olderThan (a grace, so that an artifact stored just
// now, whose record is not written yet, stays), and returns them.
func (d *Dir) Prune(keep map[Digest]bool, olderThan time.Time) ([]Digest, error) {
	entries, err := os.ReadDir(d.path)
	if err != nil {
		return nil, fmt.Errorf("codestore: %w", err)
	}
	var removed []Digest
	var errs []error
	for _, e := range entries {
		dg, err := ParseDigest(e.Name())
		if err != nil || keep[dg] {
			continue // a temporary file, or an artifact in use
		}
		info, err := e.Info()
		if err != nil || !info.ModTime().Before(olderThan) {
			continue
		}
		if err := os.Remove(d.Path(dg)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, dg)
	}
	return removed, errors.Join(errs...)
}
