package supervisor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// RecordsDir is the directory, in a supervisor's data directory, of its
// workers' pid files: <port>.json, one per slot (see PidFile). It is the
// supervisor's alone (mode 0700), out of the slots' directories, which
// belong to the workers when they run as another user.
const RecordsDir = "pids"

// legacyRecord is the name of a worker's pid file in its slot's directory,
// where supervisors kept it before RecordsDir.
const legacyRecord = "worker.json"

// maxRecordBytes bounds the pid file read.
const maxRecordBytes = 64 << 10

// PidFile is the pid file of slot port's worker in the data directory
// dataDir of its supervisor: JSON with the worker's "pid", among others.
func PidFile(dataDir string, port int) string {
	return filepath.Join(dataDir, RecordsDir, strconv.Itoa(port)+".json")
}

func (s *Supervisor) pidFile(port int) string { return PidFile(s.cfg.DataDir, port) }

// readSlotRecord reads the pid file of slot port: in RecordsDir or,
// failing that, once, where an earlier supervisor version kept it, in the
// slot's directory. The latter is moved to RecordsDir, and trusted only if
// this process's user wrote it: a regular file it owns, with no other
// link (what a worker running as another user leaves there is not).
func (s *Supervisor) readSlotRecord(port int) (record, error) {
	rec, err := readRecord(s.pidFile(port), false)
	if !errors.Is(err, fs.ErrNotExist) {
		return rec, err
	}
	legacy := filepath.Join(s.slotDir(port), legacyRecord)
	rec, err = readRecord(legacy, true)
	if errors.Is(err, fs.ErrNotExist) {
		return rec, err
	}
	os.Remove(legacy)
	if err != nil {
		s.log.Warn("supervisor: ignoring the pid file in a slot's directory", "port", port, "err", err)
		return rec, fs.ErrNotExist
	}
	if err := writeRecord(s.pidFile(port), rec); err != nil {
		return rec, err
	}
	s.log.Info("supervisor: moved a worker's pid file out of its slot's directory", "port", port, "to", s.pidFile(port))
	return rec, nil
}

// writeRecord writes r to path through a fresh temporary file beside it
// (O_EXCL|O_NOFOLLOW: never through a link), renamed over path.
func writeRecord(path string, r record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) { // a crash's leftover
		return err
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// readRecord reads the pid file at path: a regular file, not opened
// through a link, at most maxRecordBytes. With ownOnly it must also be
// this process's user's, with no other hard link.
func readRecord(path string, ownOnly bool) (record, error) {
	var r record
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return r, fmt.Errorf("supervisor: %s is a symbolic link", path)
	}
	if err != nil {
		return r, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return r, err
	}
	st := info.Sys().(*syscall.Stat_t)
	switch {
	case !info.Mode().IsRegular():
		return r, fmt.Errorf("supervisor: %s is not a regular file", path)
	case ownOnly && (st.Uid != uint32(os.Geteuid()) || st.Nlink != 1):
		return r, fmt.Errorf("supervisor: %s is not the supervisor's (owner %d, %d links)", path, st.Uid, st.Nlink)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxRecordBytes+1))
	if err != nil {
		return r, err
	}
	if len(b) > maxRecordBytes {
		return r, fmt.Errorf("supervisor: %s is larger than %d bytes", path, maxRecordBytes)
	}
	return r, json.Unmarshal(b, &r)
}

// supervisorDir makes dir, or checks the one there: a directory, not a
// symbolic link, this process's user's; it is given mode perm and, if gid
// is not negative, group gid.
func supervisorDir(dir string, perm fs.FileMode, gid int) error {
	if err := os.Mkdir(dir, perm); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("supervisor: %w", err)
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("supervisor: %s: not a directory of the supervisor's: %w", dir, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return &fs.PathError{Op: "stat", Path: dir, Err: err}
	}
	if st.Uid != uint32(os.Geteuid()) {
		return fmt.Errorf("supervisor: %s belongs to uid %d, not to the supervisor's user", dir, st.Uid)
	}
	if gid >= 0 && st.Gid != uint32(gid) {
		if err := unix.Fchown(fd, -1, gid); err != nil {
			return &fs.PathError{Op: "chown", Path: dir, Err: err}
		}
	}
	if err := unix.Fchmod(fd, uint32(perm.Perm())); err != nil {
		return &fs.PathError{Op: "chmod", Path: dir, Err: err}
	}
	return nil
}

// workerUIDs are the uids the supervisor's workers run with: the
// Isolation's RunAs user, or the supervisor's own.
func (s *Supervisor) workerUIDs() workerUIDs {
	if r := s.cfg.Isolation.RunAs; r != nil {
		return workerUIDs{r.UID, r.UID}
	}
	return workerUIDs{uint32(os.Getuid()), uint32(os.Geteuid())}
}
