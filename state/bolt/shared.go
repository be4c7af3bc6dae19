package bolt

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	bbolt "go.etcd.io/bbolt"
)

// Files shares open bbolt files within a process. bbolt locks a file for
// the process that opened it, so a second Open of the same path in the
// same process waits for the first to close it; maps of one file opened
// through Files share one *bbolt.DB instead, each holding a reference,
// and the file is closed when the last of them is closed. The zero value
// is ready to use and safe for concurrent use.
type Files struct {
	mu   sync.Mutex
	open map[string]*sharedFile
}

type sharedFile struct {
	db   *bbolt.DB
	refs int
}

// processFiles is the Files of OpenShared: one per process, because the
// lock it works around (bbolt's flock) is held per process.
var processFiles Files

// OpenShared opens a map in opts.Bucket of the file at path, sharing the
// file with every other map of it opened by OpenShared in this process
// (see Files). The options other than Bucket apply when the file is
// opened, by the first caller. Close the map to give its reference back.
func OpenShared(path string, opts Options) (*Map, error) {
	return processFiles.Open(path, opts)
}

// Open opens a map in opts.Bucket of the file at path, opening the file
// unless one of f's maps holds it open already (see Files).
func (f *Files) Open(path string, opts Options) (*Map, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("bolt: open %s: %w", path, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	sf := f.open[abs]
	if sf == nil {
		mode := os.FileMode(opts.Mode)
		if mode == 0 {
			mode = 0o600
		}
		db, err := bbolt.Open(abs, mode, &bbolt.Options{Timeout: opts.lockTimeout(), NoSync: opts.NoSync})
		if err != nil {
			return nil, fmt.Errorf("bolt: open %s: %w", path, err)
		}
		sf = &sharedFile{db: db}
		if f.open == nil {
			f.open = make(map[string]*sharedFile)
		}
		f.open[abs] = sf
	}
	m, err := newMap(sf.db, opts.bucket())
	if err != nil {
		if sf.refs == 0 {
			delete(f.open, abs)
			_ = sf.db.Close()
		}
		return nil, err
	}
	sf.refs++
	m.release = func() error { return f.release(abs, sf) }
	return m, nil
}

// release drops one reference to sf, closing its file with the last.
func (f *Files) release(abs string, sf *sharedFile) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	sf.refs--
	if sf.refs > 0 {
		return nil
	}
	if f.open[abs] == sf {
		delete(f.open, abs)
	}
	return sf.db.Close()
}
