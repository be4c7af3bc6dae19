// Package logfile writes a log to a file that it rotates by size, keeping
// a bounded number of older files, and reads the end of those files back:
// the last lines, optionally only those containing a string, in bounded
// memory. The monitor's log viewer (GET /api/v1/logs) reads with it.
//
// A Writer is an io.Writer for slog.NewJSONHandler (or any line-oriented
// log): when a write would take the file past MaxBytes it renames the
// file to PATH.1, PATH.1 to PATH.2 and so on, drops the file beyond
// MaxFiles, and starts a new PATH. It starts no goroutine; Close closes the
// file.
//
//	w, err := logfile.Open(logfile.Config{Path: "/var/log/worker.json"})
//	if err != nil { ... }
//	defer w.Close()
//	log := slog.New(slog.NewJSONHandler(w, nil))
//
// Tail reads PATH, then PATH.1, ... backwards from their ends in blocks,
// so its memory is bounded by the lines it returns and one block, whatever
// the size of the files; Filter, the matching of a line, is pure. It
// opens each file without following a symbolic link and reads regular
// files only (ErrNotRegular), so a log whose directory belongs to someone
// else (a worker's, read by its supervisor) cannot be pointed elsewhere.
package logfile
