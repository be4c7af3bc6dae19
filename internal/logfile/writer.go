package logfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"sync"
)

// Defaults of Config.
const (
	DefaultMaxBytes = 10 << 20 // 10 MiB
	DefaultMaxFiles = 5        // PATH and PATH.1 .. PATH.4
)

// Config configures a Writer. Only Path is required.
type Config struct {
	// Path is the file written; older files are Path.1 (the newest) to
	// Path.<MaxFiles-1>.
	Path string
	// MaxBytes is the size past which the file is rotated; zero means
	// DefaultMaxBytes. A single write larger than it goes into a file of
	// its own.
	MaxBytes int64
	// MaxFiles bounds how many files are kept, the one written included;
	// zero means DefaultMaxFiles; 1 keeps no older file.
	MaxFiles int
}

func (c Config) withDefaults() Config {
	if c.MaxBytes == 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if c.MaxFiles == 0 {
		c.MaxFiles = DefaultMaxFiles
	}
	return c
}

// Validate reports whether c can be used.
func (c Config) Validate() error {
	switch {
	case c.Path == "":
		return errors.New("logfile: no Path")
	case c.MaxBytes < 0:
		return fmt.Errorf("logfile: MaxBytes %d is negative", c.MaxBytes)
	case c.MaxFiles < 0:
		return fmt.Errorf("logfile: MaxFiles %d is negative", c.MaxFiles)
	}
	return nil
}

// Writer appends to a log file and rotates it by size. It is safe for
// concurrent use; each Write goes whole into one file.
type Writer struct {
	cfg Config

	mu   sync.Mutex
	f    *os.File
	size int64
}

// Open opens (appending) or creates cfg.Path.
func Open(cfg Config) (*Writer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	w := &Writer{cfg: cfg.withDefaults()}
	if err := w.open(); err != nil {
		return nil, err
	}
	return w, nil
}

// Path returns the file written.
func (w *Writer) Path() string { return w.cfg.Path }

func (w *Writer) open() error {
	f, err := os.OpenFile(w.cfg.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return fmt.Errorf("logfile: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("logfile: %w", err)
	}
	w.f, w.size = f, st.Size()
	return nil
}

// Write appends p, rotating first if p would take the file past MaxBytes.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return 0, fs.ErrClosed
	}
	if w.size > 0 && w.size+int64(len(p)) > w.cfg.MaxBytes {
		if err := w.rotate(); err != nil {
			return 0, err
		}
	}
	n, err := w.f.Write(p)
	w.size += int64(n)
	return n, err
}

// rotate closes the file, shifts the older ones up by one (dropping the
// last) and opens a new file.
func (w *Writer) rotate() error {
	if err := w.f.Close(); err != nil {
		return fmt.Errorf("logfile: %w", err)
	}
	w.f = nil
	if err := rotateFiles(w.cfg.Path, w.cfg.MaxFiles); err != nil {
		return err
	}
	return w.open()
}

// rotateFiles renames path.(n-2) to path.(n-1), ..., path to path.1,
// removing path.(n-1) first; with n = 1 it removes path.
func rotateFiles(path string, n int) error {
	if n <= 1 {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("logfile: %w", err)
		}
		return nil
	}
	if err := os.Remove(Name(path, n-1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("logfile: %w", err)
	}
	for i := n - 2; i >= 0; i-- {
		if err := os.Rename(Name(path, i), Name(path, i+1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("logfile: %w", err)
		}
	}
	return nil
}

// Name returns the name of the i-th file of the log at path: path itself
// for 0, then path.1, path.2, ... from the newest older file on.
func Name(path string, i int) string {
	if i == 0 {
		return path
	}
	return path + "." + strconv.Itoa(i)
}

// Close closes the file; later writes fail with fs.ErrClosed.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}
