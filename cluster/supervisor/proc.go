package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/squallstream/squall/internal/clock"
)

// proc is a worker process: a child of this supervisor, or one adopted
// from an earlier run of it.
type proc struct {
	rec  record
	done chan struct{} // closed when the process has exited
	code int           // exit code once done; -1 if unknown (signal, adopted)
}

// record is a worker's pid file: enough to find the process again after
// the supervisor restarts, and to tell it from an unrelated process that
// got the same pid.
type record struct {
	PID       int       `json:"pid"`
	Topology  string    `json:"topology"`
	Artifact  string    `json:"artifact"`
	Path      string    `json:"path"` // the artifact's file, the program run
	Port      int       `json:"port"`
	Started   time.Time `json:"started"`
	StartTime string    `json:"start_time"` // the kernel's start time of the process (Linux), "" if unknown
}

// launchIsolated starts the worker of slot port in its own process
// group, so that the supervisor's death (and a signal to the supervisor's
// group) leaves it running; its output goes to logPath, not to a pipe
// that would break. It runs under x's isolation (nil: none). With a user
// to run as, the worker's directory dir (and all in it) becomes that
// user's, and the artifact at path readable and executable by its group
// (see isolator.grant); the output file is opened without following a
// symbolic link the worker may have left in its directory. The worker's
// cgroup, if any, is removed when it exits, before the proc is done.
func launchIsolated(x *isolator, port int, path string, args, env []string, dir, logPath string) (*proc, *exec.Cmd, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		return nil, nil, err
	}
	defer logf.Close() // the child has its own descriptor
	// A regular file with no other hard link: not one from elsewhere that
	// the worker linked here for the supervisor to append to.
	if st, err := logf.Stat(); err != nil || !st.Mode().IsRegular() || st.Sys().(*syscall.Stat_t).Nlink != 1 {
		return nil, nil, fmt.Errorf("supervisor: %s is not a regular file of the worker's own", logPath)
	}
	cmd := exec.Command(path, args...)
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return !inheritable(kv) }), env...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c, err := x.confine(cmd, port, path, dir)
	if err != nil {
		return nil, nil, err
	}
	if cmd, err = c.start(cmd); err != nil {
		c.release()
		return nil, nil, err
	}
	p := &proc{rec: record{PID: cmd.Process.Pid, Path: path, StartTime: startTime(cmd.Process.Pid)}, done: make(chan struct{}), code: -1}
	go func() {
		cmd.Wait()
		if cmd.ProcessState != nil {
			p.code = cmd.ProcessState.ExitCode()
		}
		c.release()
		close(p.done)
	}()
	return p, cmd, nil
}

// adopt returns the process of rec if it still runs and is the worker rec
// describes (same start time, running rec.Path, as the user of uids: its
// real and effective uid), polling its liveness every poll until ctx is
// done.
func adopt(ctx context.Context, rec record, uids workerUIDs, c clock.Clock, poll time.Duration) (*proc, error) {
	if !alive(rec.PID) {
		return nil, fmt.Errorf("process %d is gone", rec.PID)
	}
	if got, err := procUIDs(rec.PID); err != nil && procAvailable() {
		return nil, fmt.Errorf("process %d: reading its user: %w", rec.PID, err)
	} else if err == nil && got != uids {
		return nil, fmt.Errorf("process %d runs as uid %d (effective %d), not as the workers' uid %d (effective %d)",
			rec.PID, got.Real, got.Effective, uids.Real, uids.Effective)
	}
	if st := startTime(rec.PID); rec.StartTime != "" && st != "" && st != rec.StartTime {
		return nil, fmt.Errorf("process %d started at %s, not at %s: another process", rec.PID, st, rec.StartTime)
	}
	if args, err := cmdline(rec.PID); err == nil {
		// argv[0] is the artifact; argv[1] when it is a script run by its
		// interpreter.
		if !(len(args) > 0 && args[0] == rec.Path) && !(len(args) > 1 && args[1] == rec.Path) {
			return nil, fmt.Errorf("process %d runs %q, not the artifact %s", rec.PID, args, rec.Path)
		}
	}
	p := &proc{rec: rec, done: make(chan struct{}), code: -1}
	go func() {
		for {
			t := c.NewTimer(poll)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C():
			}
			if !alive(rec.PID) {
				close(p.done)
				return
			}
		}
	}()
	return p, nil
}

// alive reports whether pid is a live process (not a zombie).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return !procAvailable() // without /proc, trust the signal
	}
	f := statFields(b)
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

func procAvailable() bool {
	_, err := os.Stat("/proc/self/stat")
	return err == nil
}

// statFields returns the fields of /proc/<pid>/stat after the command name
// (which may hold spaces): state first; the start time is index 19.
func statFields(b []byte) []string {
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}

// startTime is the kernel's start time of pid (Linux), or "".
func startTime(pid int) string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return ""
	}
	if f := statFields(b); len(f) > 19 {
		return f[19]
	}
	return ""
}

// workerUIDs are the real and effective uid of a worker process.
type workerUIDs struct{ Real, Effective uint32 }

// procUIDs reads the real and effective uid of pid (Linux).
func procUIDs(pid int) (workerUIDs, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return workerUIDs{}, err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "Uid:"); ok {
			// Real, effective, saved set, filesystem.
			f := strings.Fields(v)
			if len(f) < 2 {
				break
			}
			r, err1 := strconv.ParseUint(f[0], 10, 32)
			e, err2 := strconv.ParseUint(f[1], 10, 32)
			if err := errors.Join(err1, err2); err != nil {
				return workerUIDs{}, err
			}
			return workerUIDs{uint32(r), uint32(e)}, nil
		}
	}
	return workerUIDs{}, fmt.Errorf("no Uid line in /proc/%d/status", pid)
}

func cmdline(pid int) ([]string, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00"), nil
}

// terminate asks the worker's process group to stop (SIGTERM), and kills
// it (SIGKILL) if it has not exited after grace.
func terminate(p *proc, c clock.Clock, grace time.Duration) (killed bool) {
	syscall.Kill(-p.rec.PID, syscall.SIGTERM)
	t := c.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
		return false
	case <-t.C():
	}
	syscall.Kill(-p.rec.PID, syscall.SIGKILL)
	<-p.done
	return true
}
