package meta

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ExitCodeFile is the file, in a worker's data directory, where it writes
// the code it exits with: a supervisor that adopted the worker (not its
// parent, so without its exit status) reads it to tell a worker that was
// superseded or reassigned from one that crashed.
const ExitCodeFile = "exit-code"

// WriteExitCode records code in dir's ExitCodeFile (best effort: without
// it an adopted worker's exit counts as a crash).
func WriteExitCode(dir string, code int) {
	os.WriteFile(filepath.Join(dir, ExitCodeFile), []byte(strconv.Itoa(code)+"\n"), 0o600)
}

// ReadExitCode returns the code a worker wrote in dir's ExitCodeFile
// after since (its start), and false if it wrote none.
func ReadExitCode(dir string, since time.Time) (int, bool) {
	path := filepath.Join(dir, ExitCodeFile)
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.ModTime().Before(since) || fi.Size() > 16 {
		return 0, false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	code, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return code, err == nil
}
