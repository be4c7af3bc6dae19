package supervisor

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// Defaults and bounds of an Isolation.
const (
	// DefaultCgroupParent is where the workers' cgroups are made when
	// Isolation.CgroupParent is empty: the root of the cgroup v2
	// hierarchy.
	DefaultCgroupParent = "/sys/fs/cgroup"
	// MinMemoryBytes is the smallest memory limit Validate accepts (a
	// smaller one is a unit mistake, not a worker that can run).
	MinMemoryBytes = 16 << 20
	// MinOpenFiles is the smallest descriptor limit Validate accepts.
	MinOpenFiles = 16
	// MaxCPUWeight is the largest cpu.weight of cgroup v2.
	MaxCPUWeight = 10000
)

// Isolation confines the workers a supervisor starts. The zero Isolation
// confines nothing: workers run as the supervisor's user, with its
// limits.
//
// Limits are enforced by cgroup v2 where it can be used: each worker is
// started inside a cgroup of its own, <CgroupParent>/squall-<supervisor
// ID>/slot-<port>, removed when the worker exits. Where it cannot (no
// cgroup v2, a controller missing, no permission), MemoryBytes falls back
// to RLIMIT_AS and Pids and CPUWeight are not enforced (the supervisor
// logs which mechanism it uses). OpenFiles is always RLIMIT_NOFILE.
// Rlimits are set while the worker is stopped at its first instruction
// (it is started under ptrace, stopped by its exec, given its limits,
// then released), so it never runs without them.
type Isolation struct {
	// RunAs, if not nil, is the user and group the workers run as, with
	// no supplementary groups. nil: the supervisor's own user. The
	// supervisor must then be root; it gives each slot's directory to
	// that user, and the worker's group read and execute access to the
	// artifacts and search access to the data directory (see the doc of
	// launchIsolated). All the workers of a supervisor share the user:
	// they are kept from the supervisor and the rest of the machine, not
	// from each other.
	RunAs *RunAs
	// MemoryBytes caps a worker's memory: memory.max of its cgroup (its
	// resident memory and page cache; swap is forbidden: memory.swap.max
	// 0), the whole cgroup killed when it is exceeded. In the rlimit
	// fallback it caps the worker's address space (RLIMIT_AS), which is
	// larger than its resident memory: a Go program reserves about
	// 1.2 GiB at start, so leave room. 0: no limit; else at least
	// MinMemoryBytes.
	MemoryBytes int64
	// OpenFiles caps the descriptors a worker may hold (RLIMIT_NOFILE,
	// soft and hard). 0: the supervisor's limit, inherited; else at least
	// MinOpenFiles.
	OpenFiles uint64
	// Pids caps a worker's processes and threads together (pids.max).
	// Cgroup v2 only. 0: no limit.
	Pids int64
	// CPUWeight is a worker's share of the CPU under contention
	// (cpu.weight, 1 to MaxCPUWeight, the kernel's default 100). Cgroup
	// v2 only. 0: the kernel's default.
	CPUWeight uint64
	// CgroupParent is the cgroup v2 directory the workers' cgroups are
	// made under. It must be able to enable the controllers the limits
	// need for its children (the root, or a delegated cgroup holding no
	// process itself). Empty: DefaultCgroupParent, used only when a
	// cgroup limit is set and the cgroup is usable, the rlimit fallback
	// otherwise. Set: always used (every worker gets a cgroup, even with
	// no cgroup limit, for accounting and clean-up), and a parent that
	// cannot be used is an error, not a fallback. Absolute.
	CgroupParent string
	// NoCgroups always uses the rlimit fallback.
	NoCgroups bool
}

// RunAs is a user and group the workers run as.
type RunAs struct {
	UID, GID uint32
	Name     string // for logs; may be empty
}

func (r RunAs) String() string {
	if r.Name != "" {
		return fmt.Sprintf("%s (%d:%d)", r.Name, r.UID, r.GID)
	}
	return fmt.Sprintf("%d:%d", r.UID, r.GID)
}

// LookupRunAs resolves "user" or "user:group" (names or numeric ids; a
// user without a group runs with its primary group) for Isolation.RunAs,
// the way a --worker-user flag is given.
func LookupRunAs(spec string) (*RunAs, error) {
	name, group, hasGroup := strings.Cut(spec, ":")
	if name == "" || (hasGroup && group == "") {
		return nil, fmt.Errorf("supervisor: bad worker user %q: want user or user:group", spec)
	}
	r := &RunAs{Name: name}
	u, err := lookupUser(name)
	switch {
	case err == nil:
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("supervisor: worker user %q: %w", name, err)
		}
		r.UID, r.GID, r.Name = uint32(uid), uint32(gid), u.Username
	case hasGroup && isNumber(name):
		uid, _ := strconv.ParseUint(name, 10, 32)
		r.UID, r.Name = uint32(uid), ""
	default:
		return nil, fmt.Errorf("supervisor: worker user %q: %w (a numeric user unknown to the system needs a group: uid:gid)", name, err)
	}
	if hasGroup {
		gid, err := lookupGroup(group)
		if err != nil {
			return nil, fmt.Errorf("supervisor: worker group %q: %w", group, err)
		}
		r.GID = gid
	}
	return r, nil
}

func isNumber(s string) bool {
	_, err := strconv.ParseUint(s, 10, 32)
	return err == nil
}

func lookupUser(name string) (*user.User, error) {
	if isNumber(name) {
		return user.LookupId(name)
	}
	return user.Lookup(name)
}

func lookupGroup(name string) (uint32, error) {
	if isNumber(name) {
		gid, _ := strconv.ParseUint(name, 10, 32)
		return uint32(gid), nil
	}
	g, err := user.LookupGroup(name)
	if err != nil {
		return 0, err
	}
	gid, err := strconv.ParseUint(g.Gid, 10, 32)
	return uint32(gid), err
}

// Validate reports an Isolation the supervisor would refuse.
func (i Isolation) Validate() error {
	switch {
	case i.MemoryBytes < 0 || (i.MemoryBytes > 0 && i.MemoryBytes < MinMemoryBytes):
		return fmt.Errorf("supervisor: Isolation.MemoryBytes %d: want 0 (no limit) or at least %d", i.MemoryBytes, MinMemoryBytes)
	case i.OpenFiles > 0 && i.OpenFiles < MinOpenFiles:
		return fmt.Errorf("supervisor: Isolation.OpenFiles %d: want 0 (inherited) or at least %d", i.OpenFiles, MinOpenFiles)
	case i.Pids < 0:
		return fmt.Errorf("supervisor: Isolation.Pids %d: want 0 (no limit) or more", i.Pids)
	case i.CPUWeight > MaxCPUWeight:
		return fmt.Errorf("supervisor: Isolation.CPUWeight %d: want 1 to %d, or 0 (the default)", i.CPUWeight, MaxCPUWeight)
	case i.CgroupParent != "" && !filepath.IsAbs(i.CgroupParent):
		return fmt.Errorf("supervisor: Isolation.CgroupParent %q is not absolute", i.CgroupParent)
	case i.NoCgroups && i.CgroupParent != "":
		return errors.New("supervisor: Isolation.NoCgroups with a CgroupParent")
	case i.NoCgroups && (i.Pids > 0 || i.CPUWeight > 0):
		return errors.New("supervisor: Isolation.Pids and CPUWeight need cgroups, and NoCgroups is set")
	}
	return nil
}

// controllers are the cgroup v2 controllers the limits need.
func (i Isolation) controllers() []string {
	var c []string
	if i.CPUWeight > 0 {
		c = append(c, "cpu")
	}
	if i.MemoryBytes > 0 {
		c = append(c, "memory")
	}
	if i.Pids > 0 {
		c = append(c, "pids")
	}
	return c
}

// Limits of one walk over a slot's directory (chownTree).
const (
	maxChownEntries = 100_000
	maxChownDepth   = 64
)

// isolator applies an Isolation to the workers of one supervisor: what
// can be decided once (the user can reach the data directory, which
// mechanism enforces the limits, the supervisor's cgroup) is decided by
// newIsolator; confine does the rest at each start. A nil *isolator
// confines nothing.
type isolator struct {
	iso     Isolation
	dataDir string   // absolute; with RunAs
	group   string   // the supervisor's cgroup, "" without cgroups
	rlimits []rlimit // set on every worker
	log     *slog.Logger
	noTrace atomic.Bool // ptrace was refused: rlimits are set after the start

	// beforeLimits, if set (tests), is called with the pid of a worker
	// stopped before its rlimits are set.
	beforeLimits func(pid int)
}

type rlimit struct {
	resource int
	name     string
	value    uint64
}

// newIsolator checks iso against this machine: with RunAs, that the
// supervisor may switch users and that the user can reach dataDir (which
// must exist); with limits, whether cgroup v2 can enforce them (it makes
// the supervisor's cgroup then). It logs the mechanism in use.
func newIsolator(iso Isolation, supervisorID, dataDir string, log *slog.Logger) (*isolator, error) {
	if err := iso.Validate(); err != nil {
		return nil, err
	}
	x := &isolator{iso: iso, log: log}
	if iso == (Isolation{}) {
		return x, nil
	}
	if r := iso.RunAs; r != nil {
		if euid := os.Geteuid(); euid != 0 && uint32(euid) != r.UID {
			return nil, fmt.Errorf("supervisor: running workers as %s needs root (the supervisor runs as uid %d)", r, euid)
		}
		abs, err := filepath.Abs(dataDir)
		if err != nil {
			return nil, fmt.Errorf("supervisor: %w", err)
		}
		x.dataDir = abs
		if err := x.reach(abs); err != nil {
			return nil, err
		}
	}
	need := iso.controllers()
	var unavailable error
	switch {
	case iso.NoCgroups:
		unavailable = errors.New("Isolation.NoCgroups")
	case len(need) > 0 || iso.CgroupParent != "":
		parent := cmp.Or(iso.CgroupParent, DefaultCgroupParent)
		group, err := setupCgroup(parent, "squall-"+supervisorID, need)
		if err != nil && iso.CgroupParent != "" {
			return nil, fmt.Errorf("supervisor: Isolation.CgroupParent: %w", err)
		}
		x.group, unavailable = group, err
	}
	if iso.OpenFiles > 0 {
		x.rlimits = append(x.rlimits, rlimit{unix.RLIMIT_NOFILE, "RLIMIT_NOFILE", iso.OpenFiles})
	}
	if iso.MemoryBytes > 0 && x.group == "" {
		x.rlimits = append(x.rlimits, rlimit{unix.RLIMIT_AS, "RLIMIT_AS", uint64(iso.MemoryBytes)})
	}
	x.logMechanism(unavailable)
	return x, nil
}

// logMechanism says how the workers are isolated.
func (x *isolator) logMechanism(unavailable error) {
	iso := x.iso
	attrs := []any{"user", "the supervisor's"}
	if iso.RunAs != nil {
		attrs[1] = iso.RunAs.String()
	}
	switch {
	case x.group != "":
		attrs = append(attrs, "limits", "cgroup v2", "cgroup", x.group)
	case len(x.rlimits) > 0:
		attrs = append(attrs, "limits", "rlimit")
	default:
		attrs = append(attrs, "limits", "none")
	}
	if unavailable != nil && len(iso.controllers()) > 0 {
		attrs = append(attrs, "cgroup_unavailable", unavailable.Error())
	}
	attrs = append(attrs, "memory_bytes", iso.MemoryBytes, "open_files", iso.OpenFiles, "pids", iso.Pids, "cpu_weight", iso.CPUWeight)
	x.log.Info("supervisor: isolating workers", attrs...)
	if x.group == "" && (iso.Pids > 0 || iso.CPUWeight > 0) {
		x.log.Warn("supervisor: without cgroups the workers' Pids and CPUWeight limits are not enforced", "reason", unavailable)
	}
	if x.group == "" && iso.MemoryBytes > 0 && iso.MemoryBytes < 2<<30 {
		x.log.Warn("supervisor: without cgroups the memory limit is RLIMIT_AS, the worker's address space: a Go program reserves about 1.2 GiB of it at start",
			"memory_bytes", iso.MemoryBytes)
	}
}

// confinement is the isolation of one worker start.
type confinement struct {
	x      *isolator
	port   int
	cgroup string   // the slot's cgroup, "" if none
	fd     *os.File // cgroup's directory, open until the start
	oom    int64    // the cgroup's oom_kill count before the start
}

// confine prepares the start of cmd, the worker of slot port running
// artifact in its directory dir: with RunAs, the credentials, and
// permissions on the artifact and directories (see launchIsolated); with
// cgroups, the slot's cgroup with its limits, which cmd starts in. The
// caller starts cmd with start and calls release once it has exited (or
// failed to start).
func (x *isolator) confine(cmd *exec.Cmd, port int, artifact, dir string) (*confinement, error) {
	c := &confinement{x: x, port: port}
	if x == nil {
		return c, nil
	}
	if r := x.iso.RunAs; r != nil {
		if err := x.grant(artifact, dir); err != nil {
			return nil, err
		}
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: r.UID, Gid: r.GID} // Groups nil: none
	}
	if x.group != "" {
		if err := c.makeCgroup(); err != nil {
			return nil, err
		}
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, int(c.fd.Fd())
	}
	return c, nil
}

// grant lets the worker user run artifact and own dir: the directories
// leading to them must be searchable by it (those in the data directory
// are given the worker's group and g+x if they are not); the artifact
// gets the worker's group and mode 0750 (read and execute for the group,
// nothing for others); dir and everything in it get the worker's user
// and group, dir mode 0700.
func (x *isolator) grant(artifact, dir string) error {
	r := x.iso.RunAs
	if err := x.reach(filepath.Dir(artifact)); err != nil {
		return err
	}
	if err := x.reach(filepath.Dir(dir)); err != nil {
		return err
	}
	if err := os.Chown(artifact, -1, int(r.GID)); err != nil {
		return fmt.Errorf("supervisor: giving the artifact to the worker's group: %w", err)
	}
	if err := os.Chmod(artifact, 0o750); err != nil {
		return fmt.Errorf("supervisor: %w", err)
	}
	left := maxChownEntries
	linked, err := chownTree(dir, int(r.UID), int(r.GID), &left)
	if linked > 0 {
		x.log.Warn("supervisor: files of a slot's directory with other hard links were not given to the worker user (they may be files from elsewhere linked there)",
			"dir", dir, "files", linked)
	}
	if errors.Is(err, errChownBudget) {
		x.log.Warn("supervisor: a slot's directory has too many entries to give them all to the worker user", "dir", dir,
			"entries", maxChownEntries, "depth", maxChownDepth)
	} else if err != nil {
		return fmt.Errorf("supervisor: giving the slot's directory to the worker user: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("supervisor: %w", err)
	}
	return nil
}

// reach makes dir searchable by the worker user, with every directory
// above it: a directory inside the data directory that is not is given
// the worker's group and g+x; one outside it that is not is an error.
func (x *isolator) reach(dir string) error {
	r := x.iso.RunAs
	dir, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("supervisor: %w", err)
	}
	var path []string
	for p := dir; ; p = filepath.Dir(p) {
		path = append(path, p)
		if p == filepath.Dir(p) {
			break
		}
	}
	for _, p := range slices.Backward(path) {
		info, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("supervisor: %w", err)
		}
		st := info.Sys().(*syscall.Stat_t)
		if searchable(st, r.UID, r.GID) {
			continue
		}
		if rel, err := filepath.Rel(x.dataDir, p); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			return fmt.Errorf("supervisor: the worker user %s cannot search %s (mode %v, owner %d:%d): give it access, or move the data directory",
				r, p, info.Mode().Perm(), st.Uid, st.Gid)
		}
		if err := os.Chown(p, -1, int(r.GID)); err != nil {
			return fmt.Errorf("supervisor: %w", err)
		}
		mode := info.Mode()&(fs.ModePerm|fs.ModeSetgid|fs.ModeSticky) | 0o010
		if err := os.Chmod(p, mode); err != nil {
			return fmt.Errorf("supervisor: %w", err)
		}
	}
	return nil
}

// searchable reports whether a directory lets uid:gid (and no
// supplementary group) search it, by its mode bits (ACLs are ignored).
func searchable(st *syscall.Stat_t, uid, gid uint32) bool {
	switch {
	case uid == 0:
		return true
	case st.Uid == uid:
		return st.Mode&0o100 != 0
	case st.Gid == gid:
		return st.Mode&0o010 != 0
	}
	return st.Mode&0o001 != 0
}

var errChownBudget = errors.New("supervisor: too many entries")

// chownTree gives dir and everything under it to uid:gid without
// following symbolic links: every directory is opened relative to its
// parent's descriptor with O_NOFOLLOW, so a link a worker planted cannot
// take the walk outside. A file with other hard links keeps its owner (a
// worker could link a file from elsewhere on the file system there, where
// fs.protected_hardlinks lets it): chownTree returns how many it left. It
// visits at most *left entries.
func chownTree(dir string, uid, gid int, left *int) (linked int, err error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	err = chownAt(fd, dir, uid, gid, left, &linked, 0)
	return linked, err
}

// chownAt is chownTree of the open directory fd (which it closes).
func chownAt(fd int, name string, uid, gid int, left, linked *int, depth int) error {
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	if err := unix.Fchown(fd, uid, gid); err != nil {
		return &fs.PathError{Op: "chown", Path: name, Err: err}
	}
	for {
		names, err := f.Readdirnames(256)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		for _, n := range names {
			if *left--; *left < 0 {
				return errChownBudget
			}
			sub, err := unix.Openat(fd, n, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			switch {
			case err == nil && depth >= maxChownDepth:
				unix.Close(sub)
				return errChownBudget
			case err == nil:
				if err := chownAt(sub, filepath.Join(name, n), uid, gid, left, linked, depth+1); err != nil {
					return err
				}
			case errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP):
				// A file, or a symbolic link: the link itself changes hands.
				ok, err := chownEntry(fd, n, uid, gid)
				if err != nil {
					return &fs.PathError{Op: "chown", Path: filepath.Join(name, n), Err: err}
				}
				if !ok {
					*linked++
				}
			case errors.Is(err, unix.ENOENT):
			default:
				return &fs.PathError{Op: "open", Path: filepath.Join(name, n), Err: err}
			}
		}
	}
}

// chownEntry gives the entry name of directory dirfd, not a directory,
// to uid:gid, unless it has other hard links (then ok is false). A
// symbolic link is not followed: the link itself changes hands. The
// entry is opened (O_PATH) before it is checked, so it cannot be swapped
// between the check and the chown. A vanished entry is skipped.
func chownEntry(dirfd int, name string, uid, gid int) (ok bool, err error) {
	fd, err := unix.Openat(dirfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return false, err
	}
	if st.Nlink > 1 {
		return false, nil
	}
	return true, unix.Fchownat(fd, "", uid, gid, unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW)
}

// start starts cmd with its rlimits in place before it runs its first
// instruction: it is started traced, so its exec stops it; the limits are
// set (prlimit), then it is detached and runs. Where the kernel refuses
// ptrace, the limits are set right after the start instead (the worker
// may run a moment without them; logged once). It returns the started
// command: a new one if cmd could not be started traced.
func (c *confinement) start(cmd *exec.Cmd) (*exec.Cmd, error) {
	if c.fd != nil {
		defer func() { c.fd.Close(); c.fd = nil }()
	}
	if c.x == nil || len(c.x.rlimits) == 0 {
		return cmd, cmd.Start()
	}
	if !c.x.noTrace.Load() {
		err := c.startTraced(cmd)
		var refused traceRefusedError
		if !errors.As(err, &refused) {
			return cmd, err
		}
		if !c.x.noTrace.Swap(true) {
			c.x.log.Warn("supervisor: ptrace refused: the workers' rlimits are set right after they start, not before", "err", err)
		}
		attr := *cmd.SysProcAttr
		attr.Ptrace = false
		cmd = &exec.Cmd{Path: cmd.Path, Args: cmd.Args, Env: cmd.Env, Dir: cmd.Dir, Stdout: cmd.Stdout, Stderr: cmd.Stderr, SysProcAttr: &attr}
	}
	if err := cmd.Start(); err != nil {
		return cmd, err
	}
	if err := c.x.setLimits(cmd.Process.Pid); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return cmd, err
	}
	return cmd, nil
}

// traceRefusedError is a start refused because of ptrace.
type traceRefusedError struct{ err error }

func (e traceRefusedError) Error() string { return "supervisor: starting traced: " + e.err.Error() }
func (e traceRefusedError) Unwrap() error { return e.err }

// cldTrapped is si_code of a traced child's stop (CLD_TRAPPED).
const cldTrapped = 4

func (c *confinement) startTraced(cmd *exec.Cmd) error {
	// The thread that starts a traced child is its tracer: the same thread
	// must detach it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd.SysProcAttr.Ptrace = true
	if err := cmd.Start(); err != nil {
		if errors.Is(err, syscall.EPERM) {
			return traceRefusedError{err}
		}
		return err
	}
	pid := cmd.Process.Pid
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WSTOPPED|unix.WNOWAIT, nil)
	for errors.Is(err, unix.EINTR) {
		err = unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WSTOPPED|unix.WNOWAIT, nil)
	}
	if err == nil && info.Code != cldTrapped {
		err = fmt.Errorf("the worker (pid %d) did not stop at its start (si_code %d)", pid, info.Code)
	}
	if err == nil && c.x.beforeLimits != nil {
		c.x.beforeLimits(pid)
	}
	if err == nil {
		err = c.x.setLimits(pid)
	}
	if err == nil {
		err = unix.PtraceDetach(pid)
	}
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return fmt.Errorf("supervisor: setting the worker's limits: %w", err)
	}
	return nil
}

// setLimits sets the rlimits of process pid. A worker running as another
// user gets them from a thread whose real uid and gid are the worker's
// (see prlimitAs).
func (x *isolator) setLimits(pid int) error {
	if r := x.iso.RunAs; r != nil && (uint32(os.Getuid()) != r.UID || uint32(os.Getgid()) != r.GID) {
		return prlimitAs(r, pid, x.rlimits)
	}
	return prlimit(pid, x.rlimits)
}

func prlimit(pid int, limits []rlimit) error {
	for _, l := range limits {
		if err := unix.Prlimit(pid, l.resource, &unix.Rlimit{Cur: l.value, Max: l.value}, nil); err != nil {
			return fmt.Errorf("supervisor: %s of pid %d: %w", l.name, pid, err)
		}
	}
	return nil
}

// prlimitAs sets the rlimits of pid, a process of r, from a thread of its
// own whose real uid and gid are r's (its effective ids, and so its
// capabilities, stay the supervisor's): the kernel lets a process set the
// limits of one with its real ids without CAP_SYS_RESOURCE, which root
// often lacks (in a container, say). The thread is not given back: its
// goroutine ends locked to it, which ends the thread.
func prlimitAs(r *RunAs, pid int, limits []rlimit) error {
	done := make(chan error, 1)
	go prlimitAsThread(r, pid, limits, done)
	return <-done
}

// prlimitAsThread is prlimitAs on the thread of its goroutine, which it
// locks and, once it has r's ids, never unlocks; its caller must let the
// goroutine end. The main thread is never given r's ids: the kernel does
// not end it with its goroutine but keeps it, and checks the signals sent
// to the process against its real uid (the worker could then signal the
// supervisor). On the main thread it runs itself again on another thread
// (this one stays locked meanwhile: the new goroutine cannot run on it).
func prlimitAsThread(r *RunAs, pid int, limits []rlimit, done chan<- error) {
	runtime.LockOSThread() // never unlocked, but on the main thread
	if unix.Gettid() == unix.Getpid() {
		other := make(chan error, 1)
		go prlimitAsThread(r, pid, limits, other)
		err := <-other
		runtime.UnlockOSThread()
		done <- err
		return
	}
	// Raw system calls change this thread's credentials only (the syscall
	// package's change every thread's).
	if _, _, e := syscall.RawSyscall(syscall.SYS_SETRESGID, uintptr(r.GID), ^uintptr(0), ^uintptr(0)); e != 0 {
		done <- fmt.Errorf("supervisor: setting a thread's real gid: %w", e)
		return
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_SETRESUID, uintptr(r.UID), ^uintptr(0), ^uintptr(0)); e != 0 {
		done <- fmt.Errorf("supervisor: setting a thread's real uid: %w", e)
		return
	}
	done <- prlimit(pid, limits)
}

// release removes the worker's cgroup once it has exited, after saying
// whether its memory limit killed it. Processes the worker left in it are
// killed (cgroup.kill); the directory is then removed by the slot's next
// start or stays, empty.
func (c *confinement) release() {
	if c.fd != nil {
		c.fd.Close()
		c.fd = nil
	}
	if c.cgroup == "" {
		return
	}
	log := c.x.log.With("port", c.port, "cgroup", c.cgroup)
	if n := oomKills(c.cgroup); n > c.oom {
		log.Warn("supervisor: the worker was killed by its memory limit", "memory_bytes", c.x.iso.MemoryBytes)
	}
	err := unix.Rmdir(c.cgroup)
	switch {
	case errors.Is(err, unix.EBUSY):
		kerr := writeCgroup(c.cgroup, "cgroup.kill", "1")
		log.Warn("supervisor: killed the processes the worker left in its cgroup", "err", kerr)
	case err != nil && !errors.Is(err, unix.ENOENT):
		log.Warn("supervisor: removing the worker's cgroup", "err", err)
	}
}

// setupCgroup checks that parent is a cgroup v2 directory offering the
// controllers need, enables them for its children, and makes (or finds)
// the supervisor's cgroup name in it, with them enabled for the slots.
func setupCgroup(parent, name string, need []string) (string, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(parent, &st); err != nil {
		return "", &fs.PathError{Op: "statfs", Path: parent, Err: err}
	}
	if st.Type != unix.CGROUP2_SUPER_MAGIC {
		return "", fmt.Errorf("%s is not a cgroup v2 directory", parent)
	}
	have, err := os.ReadFile(filepath.Join(parent, "cgroup.controllers"))
	if err != nil {
		return "", err
	}
	if miss := missing(string(have), need); len(miss) > 0 {
		return "", fmt.Errorf("%s lacks the controllers %s", parent, strings.Join(miss, " "))
	}
	if err := enableControllers(parent, need); err != nil {
		return "", err
	}
	group := filepath.Join(parent, name)
	if err := os.Mkdir(group, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	if err := enableControllers(group, need); err != nil {
		return "", err
	}
	return group, nil
}

// missing returns the controllers of need not in the list have.
func missing(have string, need []string) []string {
	var out []string
	for _, c := range need {
		if !slices.Contains(strings.Fields(have), c) {
			out = append(out, c)
		}
	}
	return out
}

// enableControllers enables the controllers need in dir's children.
func enableControllers(dir string, need []string) error {
	on, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	if err != nil {
		return err
	}
	var add []string
	for _, c := range missing(string(on), need) {
		add = append(add, "+"+c)
	}
	if len(add) == 0 {
		return nil
	}
	if err := writeCgroup(dir, "cgroup.subtree_control", strings.Join(add, " ")); err != nil {
		return fmt.Errorf("enabling %s for the children of %s: %w", strings.Join(add, " "), dir, err)
	}
	return nil
}

// cgroupFile is one limit file of a slot's cgroup; an optional one may be
// absent (its controller off, or an older kernel).
type cgroupFile struct {
	name, value string
	required    bool
}

// cgroupFiles are the files written in a slot's cgroup for iso: limits
// that are not set are reset, for a cgroup left by an earlier worker.
func cgroupFiles(iso Isolation) []cgroupFile {
	limit := func(v int64) string {
		if v == 0 {
			return "max"
		}
		return strconv.FormatInt(v, 10)
	}
	swap, weight := "max", "100"
	if iso.MemoryBytes > 0 {
		swap = "0"
	}
	if iso.CPUWeight > 0 {
		weight = strconv.FormatUint(iso.CPUWeight, 10)
	}
	return []cgroupFile{
		{"memory.max", limit(iso.MemoryBytes), iso.MemoryBytes > 0},
		{"memory.swap.max", swap, false},
		{"memory.oom.group", "1", false},
		{"pids.max", limit(iso.Pids), iso.Pids > 0},
		{"cpu.weight", weight, iso.CPUWeight > 0},
	}
}

// makeCgroup makes (or finds) the slot's cgroup, writes its limits and
// opens it for the start.
func (c *confinement) makeCgroup() error {
	dir := filepath.Join(c.x.group, "slot-"+strconv.Itoa(c.port))
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("supervisor: %w", err)
	}
	for _, f := range cgroupFiles(c.x.iso) {
		if err := writeCgroup(dir, f.name, f.value); err != nil && (f.required || !errors.Is(err, fs.ErrNotExist)) {
			return fmt.Errorf("supervisor: %s of the worker's cgroup: %w", f.name, err)
		}
	}
	fd, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("supervisor: %w", err)
	}
	c.cgroup, c.fd, c.oom = dir, fd, oomKills(dir)
	return nil
}

func writeCgroup(dir, name, value string) error {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// oomKills is the oom_kill count of a cgroup's memory.events (0 if none).
func oomKills(dir string) int64 {
	b, err := os.ReadFile(filepath.Join(dir, "memory.events"))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "oom_kill "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}
