//go:build unix

package logfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Whoever writes in a log's directory cannot make Tail read another
// file: a symbolic link (as the log or as a rotated file) and anything
// that is not a regular file are refused, and the link's target is not
// read.
func TestTailRefusesLinksAndSpecialFiles(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("root:secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tail := func(path string, q Query) (Result, error) {
		t.Helper()
		type out struct {
			res Result
			err error
		}
		done := make(chan out, 1)
		go func() { res, err := Tail(path, 3, q); done <- out{res, err} }()
		select {
		case o := <-done:
			return o.res, o.err
		case <-time.After(10 * time.Second): // a hang, not a timing: the open blocked
			t.Fatalf("Tail(%s) blocked", path)
			return Result{}, nil
		}
	}
	for name, plant := range map[string]func(path string) error{
		"a link as the log":        func(p string) error { return os.Symlink(secret, p) },
		"a link as a rotated file": func(p string) error { os.WriteFile(p, []byte("ok\n"), 0o600); return os.Symlink(secret, Name(p, 1)) },
		"a link to a directory":    func(p string) error { return os.Symlink(filepath.Dir(secret), p) },
		"a FIFO (would block)":     func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"a directory":              func(p string) error { return os.Mkdir(p, 0o700) },
		"a dangling link":          func(p string) error { return os.Symlink(filepath.Join(t.TempDir(), "none"), p) },
	} {
		path := filepath.Join(t.TempDir(), "worker.jsonl")
		if err := plant(path); err != nil {
			t.Fatal(err)
		}
		res, err := tail(path, Query{})
		if !errors.Is(err, ErrNotRegular) {
			t.Errorf("%s: Tail = %q, %v; want ErrNotRegular", name, res.Lines, err)
		}
		for _, l := range res.Lines {
			if strings.Contains(l, "secret") {
				t.Errorf("%s: the link's target was read: %q", name, res.Lines)
			}
		}
	}

	// Check sees each file and can refuse it.
	path := filepath.Join(t.TempDir(), "worker.jsonl")
	os.WriteFile(path, []byte("new\n"), 0o600)
	os.WriteFile(Name(path, 1), []byte("old\n"), 0o600)
	var seen []int64
	res, err := tail(path, Query{Check: func(st fs.FileInfo) error { seen = append(seen, st.Size()); return nil }})
	if err != nil || len(res.Lines) != 2 || len(seen) != 2 {
		t.Fatalf("Check accepting: %q, %v, checked %v", res.Lines, err, seen)
	}
	refused := errors.New("refused")
	if _, err := tail(path, Query{Check: func(fs.FileInfo) error { return refused }}); !errors.Is(err, refused) {
		t.Fatalf("Check refusing: %v", err)
	}
}
