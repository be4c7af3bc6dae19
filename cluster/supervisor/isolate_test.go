package supervisor

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// needRoot skips a test that needs root, except under CI, where a skip
// would hide the test: there it fails.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("this test needs root (CI=true: not skipped)")
	}
	t.Skip("needs root")
}

// helperSource is the worker the isolation tests start: a Go program like
// a real worker, not the test binary (a race-enabled binary reserves
// terabytes of address space, which RLIMIT_AS forbids).
const helperSource = `package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type report struct {
	UID, GID        int
	Groups          []int
	NoFile, NoFileMax uint64
	Cgroup          string
	Write, Append, Read string
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func nofile() syscall.Rlimit {
	var l syscall.Rlimit
	syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l)
	return l
}

func main() {
	switch os.Args[1] {
	case "report":
		var r report
		r.UID, r.GID = os.Getuid(), os.Getgid()
		r.Groups, _ = os.Getgroups()
		l := nofile()
		r.NoFile, r.NoFileMax = l.Cur, l.Max
		cg, _ := os.ReadFile("/proc/self/cgroup")
		for _, line := range strings.Split(string(cg), "\n") {
			if strings.HasPrefix(line, "0::") {
				r.Cgroup = strings.TrimPrefix(line, "0::")
			}
		}
		r.Write = errString(os.WriteFile("made-by-worker", []byte("x"), 0o600))
		f, err := os.OpenFile("worker.jsonl", os.O_WRONLY|os.O_APPEND, 0)
		if err == nil {
			_, err = f.WriteString("{}\n")
			f.Close()
		}
		r.Append = errString(err)
		_, err = os.ReadFile("certs/key.pem")
		r.Read = errString(err)
		json.NewEncoder(os.Stdout).Encode(r)
	case "wait-nofile":
		want, _ := strconv.ParseUint(os.Args[2], 10, 64)
		for end := time.Now().Add(20 * time.Second); nofile().Cur != want && time.Now().Before(end); {
			time.Sleep(time.Millisecond)
		}
		fmt.Println("nofile", nofile().Cur)
	case "alloc":
		n, _ := strconv.ParseInt(os.Args[2], 10, 64)
		b := make([]byte, n)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		fmt.Println("allocated", len(b))
	}
}
`

type helperReport struct {
	UID, GID            int
	Groups              []int
	NoFile, NoFileMax   uint64
	Cgroup              string
	Write, Append, Read string
}

// buildHelper builds helperSource and returns the program's path.
func buildHelper(t *testing.T) string {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build a helper program: %v", err)
	}
	src := t.TempDir()
	for name, content := range map[string]string{"main.go": helperSource, "go.mod": "module helper\n\ngo 1.26\n"} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(src, "helper")
	cmd := exec.Command(goCmd, "build", "-o", bin, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=", "GOWORK=off", "GO111MODULE=on", "GOTOOLCHAIN=local")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the helper: %v\n%s", err, out)
	}
	return bin
}

// layout is a supervisor's data directory as New and start leave it: the
// artifact in artifacts/ (mode 0700), the slot's directory workers/<port>
// (0700), everything root's.
type layout struct {
	data, artifact, slot string
	port                 int
}

func newLayout(t *testing.T, helper string, port int) layout {
	t.Helper()
	root := t.TempDir()
	// The test's temporary directories are 0700: the worker user must be
	// able to pass them, as it must pass the ancestors of a real data
	// directory.
	for _, d := range []string{filepath.Dir(root), root} {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	l := layout{data: filepath.Join(root, "data"), port: port}
	l.artifact = filepath.Join(l.data, "artifacts", "0123abcd")
	l.slot = filepath.Join(l.data, "workers", strconv.Itoa(port))
	for _, d := range []string{l.data, filepath.Dir(l.slot), l.slot} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(l.artifact), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(helper)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(l.artifact, b, 0o700); err != nil {
		t.Fatal(err)
	}
	return l
}

// logRecorder keeps the messages and attributes logged, one line each.
type logRecorder struct{ buf bytes.Buffer }

func (r *logRecorder) logger() *slog.Logger { return slog.New(slog.NewTextHandler(&r.buf, nil)) }
func (r *logRecorder) String() string       { return r.buf.String() }

// run starts the helper as the worker of l's slot under x, waits for its
// exit and returns its output and exit state.
func run(t *testing.T, x *isolator, l layout, args ...string) (string, *os.ProcessState) {
	t.Helper()
	out := filepath.Join(l.slot, WorkerOutputFile)
	os.Remove(out)
	p, cmd, err := launchIsolated(x, l.port, l.artifact, args, nil, l.slot, out)
	if err != nil {
		t.Fatalf("launch: %v", err)
	}
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		syscallKill(p.rec.PID)
		t.Fatal("the helper did not exit")
	}
	b, _ := os.ReadFile(out)
	return string(b), cmd.ProcessState
}

func parseReport(t *testing.T, out string) helperReport {
	t.Helper()
	var r helperReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("helper output %q: %v", out, err)
	}
	return r
}

func owner(t *testing.T, path string) (uid, gid uint32, mode os.FileMode) {
	t.Helper()
	info, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := info.Sys().(*syscall.Stat_t)
	return st.Uid, st.Gid, info.Mode()
}

func TestIsolatedWorkers(t *testing.T) {
	needRoot(t)
	helper := buildHelper(t)

	t.Run("run as user", func(t *testing.T) {
		l := newLayout(t, helper, 7000)
		// What an earlier worker running as root left (and a
		// certificate an earlier supervisor version wrote there).
		for name, mode := range map[string]os.FileMode{"worker.jsonl": 0o600, "certs/key.pem": 0o600} {
			os.MkdirAll(filepath.Join(l.slot, filepath.Dir(name)), 0o700)
			if err := os.WriteFile(filepath.Join(l.slot, name), []byte("{}\n"), mode); err != nil {
				t.Fatal(err)
			}
		}
		// Links a worker may plant to get files outside its directory
		// given to it: neither the file nor the directory they point at
		// may change hands.
		outside := t.TempDir()
		secret := filepath.Join(outside, "secret")
		os.WriteFile(secret, []byte("s"), 0o600)
		os.Symlink(secret, filepath.Join(l.slot, "link-to-file"))
		os.Symlink(outside, filepath.Join(l.slot, "link-to-dir"))

		// A supplementary group of the supervisor's, which the worker must
		// not keep.
		groups, err := syscall.Getgroups()
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Setgroups(append(groups, 4242)); err != nil {
			t.Fatal(err)
		}
		defer syscall.Setgroups(groups)
		var logs logRecorder
		x, err := newIsolator(Isolation{RunAs: &RunAs{UID: 65534, GID: 65534, Name: "nobody"}}, "t1", l.data, logs.logger())
		if err != nil {
			t.Fatal(err)
		}
		out, st := run(t, x, l, "report")
		if !st.Success() {
			t.Fatalf("helper failed: %v\n%s", st, out)
		}
		r := parseReport(t, out)
		if r.UID != 65534 || r.GID != 65534 || len(r.Groups) != 0 {
			t.Errorf("the worker ran as uid %d gid %d groups %v, want 65534 65534 []", r.UID, r.GID, r.Groups)
		}
		if r.Write != "" || r.Append != "" || r.Read != "" {
			t.Errorf("the worker could not use its directory: write %q, append to its log %q, read its key %q", r.Write, r.Append, r.Read)
		}
		if _, gid, mode := owner(t, l.artifact); gid != 65534 || mode.Perm() != 0o750 {
			t.Errorf("artifact group %d mode %v, want 65534 0750", gid, mode.Perm())
		}
		for _, p := range []string{secret, outside} {
			if uid, _, _ := owner(t, p); uid != 0 {
				t.Errorf("%s outside the slot's directory was given to uid %d through a link", p, uid)
			}
		}
		if uid, _, _ := owner(t, filepath.Join(l.slot, "link-to-file")); uid != 65534 {
			t.Errorf("the link itself belongs to %d, want 65534", uid)
		}
		if !strings.Contains(logs.String(), "user=\"nobody (65534:65534)\"") {
			t.Errorf("the isolation log line does not name the user:\n%s", logs.String())
		}
	})

	t.Run("the output file is not opened through a link", func(t *testing.T) {
		l := newLayout(t, helper, 7000)
		target := filepath.Join(t.TempDir(), "passwd")
		os.WriteFile(target, []byte("root\n"), 0o600)
		if err := os.Symlink(target, filepath.Join(l.slot, WorkerOutputFile)); err != nil {
			t.Fatal(err)
		}
		x, err := newIsolator(Isolation{RunAs: &RunAs{UID: 65534, GID: 65534}}, "t1", l.data, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		p, _, err := launchIsolated(x, l.port, l.artifact, []string{"report"}, nil, l.slot, filepath.Join(l.slot, WorkerOutputFile))
		if err == nil {
			<-p.done
			t.Error("a worker started with its output going through a link")
		}
		if b, _ := os.ReadFile(target); string(b) != "root\n" {
			t.Errorf("the link's target was written: %q", b)
		}
	})

	t.Run("a data directory the user cannot reach is refused", func(t *testing.T) {
		root := t.TempDir() // 0700, not made searchable
		data := filepath.Join(root, "data")
		os.MkdirAll(data, 0o700)
		_, err := newIsolator(Isolation{RunAs: &RunAs{UID: 65534, GID: 65534}}, "t1", data, slog.New(slog.DiscardHandler))
		if err == nil || !strings.Contains(err.Error(), "cannot search") {
			t.Fatalf("newIsolator = %v, want a refusal naming the directory", err)
		}
		if _, _, mode := owner(t, filepath.Dir(root)); mode.Perm()&0o011 != 0 {
			t.Errorf("a directory outside the data directory was opened: %v", mode.Perm())
		}
	})

	t.Run("open files, set before the worker runs", func(t *testing.T) {
		l := newLayout(t, helper, 7000)
		var logs logRecorder
		x, err := newIsolator(Isolation{OpenFiles: 100}, "t1", l.data, logs.logger())
		if err != nil {
			t.Fatal(err)
		}
		stopped := false
		x.beforeLimits = func(pid int) {
			b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
			f := statFields(b)
			stopped = len(f) > 0 && f[0] == "t"
		}
		out, st := run(t, x, l, "report")
		if !st.Success() {
			t.Fatalf("helper failed: %v\n%s", st, out)
		}
		if !stopped {
			t.Error("the worker was not stopped (traced) before its limits were set")
		}
		if r := parseReport(t, out); r.NoFile != 100 || r.NoFileMax != 100 {
			t.Errorf("RLIMIT_NOFILE %d/%d, want 100/100", r.NoFile, r.NoFileMax)
		}
		if !strings.Contains(logs.String(), "limits=rlimit") || !strings.Contains(logs.String(), "open_files=100") {
			t.Errorf("the isolation log line does not say rlimit:\n%s", logs.String())
		}
	})

	t.Run("limits of a worker running as another user", func(t *testing.T) {
		l := newLayout(t, helper, 7000)
		x, err := newIsolator(Isolation{RunAs: &RunAs{UID: 65534, GID: 65534}, OpenFiles: 100, MemoryBytes: 2 << 30, NoCgroups: true},
			"t1", l.data, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		out, st := run(t, x, l, "report")
		if !st.Success() {
			t.Fatalf("helper failed: %v\n%s", st, out)
		}
		if r := parseReport(t, out); r.UID != 65534 || r.NoFile != 100 || r.NoFileMax != 100 {
			t.Errorf("uid %d RLIMIT_NOFILE %d/%d, want 65534 100/100", r.UID, r.NoFile, r.NoFileMax)
		}
		if out, st := run(t, x, l, "alloc", strconv.Itoa(3<<30)); st.Success() || !strings.Contains(out, "out of memory") {
			t.Errorf("3 GiB under a 2 GiB limit: %v\n%s", st, out)
		}
	})

	t.Run("open files without ptrace", func(t *testing.T) {
		l := newLayout(t, helper, 7000)
		x, err := newIsolator(Isolation{OpenFiles: 90}, "t1", l.data, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		x.noTrace.Store(true)
		out, st := run(t, x, l, "wait-nofile", "90")
		if !st.Success() || strings.TrimSpace(out) != "nofile 90" {
			t.Errorf("helper %v: %q, want nofile 90", st, out)
		}
	})

	t.Run("memory, rlimit", func(t *testing.T) {
		l := newLayout(t, helper, 7000)
		// RLIMIT_AS bounds the address space: a Go program reserves about
		// 1.2 GiB of it before its first allocation.
		x, err := newIsolator(Isolation{MemoryBytes: 2 << 30, NoCgroups: true}, "t1", l.data, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		if out, st := run(t, x, l, "alloc", strconv.Itoa(64<<20)); !st.Success() {
			t.Fatalf("64 MiB under a 2 GiB limit failed: %v\n%s", st, out)
		}
		out, st := run(t, x, l, "alloc", strconv.Itoa(3<<30))
		if st.Success() || !strings.Contains(out, "out of memory") {
			t.Errorf("3 GiB under a 2 GiB limit: %v\n%s", st, out)
		}
	})

	t.Run("cgroup placement", func(t *testing.T) {
		parent := testCgroup(t, nil)
		l := newLayout(t, helper, 7001)
		var logs logRecorder
		x, err := newIsolator(Isolation{CgroupParent: parent}, "t1", l.data, logs.logger())
		if err != nil {
			t.Fatal(err)
		}
		slot := filepath.Join(parent, "squall-t1", "slot-7001")
		out, st := run(t, x, l, "report")
		if !st.Success() {
			t.Fatalf("helper failed: %v\n%s", st, out)
		}
		if r := parseReport(t, out); !strings.HasSuffix(r.Cgroup, "/squall-t1/slot-7001") {
			t.Errorf("the worker ran in cgroup %q, want …/squall-t1/slot-7001", r.Cgroup)
		}
		if _, err := os.Stat(slot); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the worker's cgroup is still there after its exit: %v", err)
		}
		if !strings.Contains(logs.String(), `limits="cgroup v2"`) {
			t.Errorf("the isolation log line does not say cgroup v2:\n%s", logs.String())
		}
	})

	t.Run("memory, cgroup", func(t *testing.T) {
		parent := testCgroup(t, []string{"memory"})
		l := newLayout(t, helper, 7002)
		x, err := newIsolator(Isolation{MemoryBytes: 64 << 20, CgroupParent: parent}, "t1", l.data, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		if out, st := run(t, x, l, "alloc", strconv.Itoa(8<<20)); !st.Success() {
			t.Fatalf("8 MiB under a 64 MiB limit failed: %v\n%s", st, out)
		}
		out, st := run(t, x, l, "alloc", strconv.Itoa(256<<20))
		if ws, ok := st.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Errorf("256 MiB under a 64 MiB limit: %v, want killed\n%s", st, out)
		}
	})
}

// testCgroup returns a fresh cgroup v2 directory offering controllers to
// its children, removed (with what the test made in it) at cleanup; it
// skips the test where there is none (a cgroup v1 machine, or the
// controllers bound elsewhere).
func testCgroup(t *testing.T, controllers []string) string {
	t.Helper()
	mount := cgroup2Mount()
	if mount == "" {
		t.Skip("no cgroup v2 hierarchy mounted")
	}
	have, _ := os.ReadFile(filepath.Join(mount, "cgroup.controllers"))
	if miss := missing(string(have), controllers); len(miss) > 0 {
		t.Skipf("the cgroup v2 hierarchy at %s lacks %v", mount, miss)
	}
	if err := enableControllers(mount, controllers); err != nil {
		t.Skipf("cannot enable %v under %s: %v", controllers, mount, err)
	}
	dir := filepath.Join(mount, fmt.Sprintf("squall-test-%d-%d", os.Getpid(), time.Now().UnixNano()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot make a cgroup: %v", err)
	}
	t.Cleanup(func() {
		// Deepest first.
		var dirs []string
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for _, d := range slices.Backward(dirs) {
			if err := syscall.Rmdir(d); err != nil {
				t.Errorf("removing the test cgroup %s: %v", d, err)
			}
		}
	})
	return dir
}

// cgroup2Mount is where the cgroup v2 hierarchy is mounted, or "".
func cgroup2Mount() string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// ... mount-point ... - fstype source options
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields := strings.Fields(pre)
		if ok && strings.HasPrefix(post, "cgroup2 ") && len(fields) > 4 {
			return fields[4]
		}
	}
	return ""
}

func TestIsolationValidate(t *testing.T) {
	good := []Isolation{
		{},
		{RunAs: &RunAs{UID: 65534, GID: 65534}, MemoryBytes: MinMemoryBytes, OpenFiles: MinOpenFiles, Pids: 100, CPUWeight: MaxCPUWeight},
		{CgroupParent: "/sys/fs/cgroup/squall.slice"},
		{NoCgroups: true, MemoryBytes: 1 << 30, OpenFiles: 1024},
	}
	for _, iso := range good {
		if err := iso.Validate(); err != nil {
			t.Errorf("%+v: %v", iso, err)
		}
	}
	bad := []Isolation{
		{MemoryBytes: -1},
		{MemoryBytes: 512}, // bytes, meant MiB
		{OpenFiles: 3},
		{Pids: -1},
		{CPUWeight: MaxCPUWeight + 1},
		{CgroupParent: "sys/fs/cgroup"},
		{NoCgroups: true, CgroupParent: "/sys/fs/cgroup"},
		{NoCgroups: true, Pids: 10},
		{NoCgroups: true, CPUWeight: 10},
	}
	for _, iso := range bad {
		if err := iso.Validate(); err == nil {
			t.Errorf("%+v: valid", iso)
		}
	}
	if _, err := newIsolator(Isolation{MemoryBytes: -1}, "t1", t.TempDir(), slog.New(slog.DiscardHandler)); err == nil {
		t.Error("newIsolator took an invalid Isolation")
	}
}

func TestLookupRunAs(t *testing.T) {
	for spec, want := range map[string]RunAs{
		"root":               {UID: 0, GID: 0, Name: "root"},
		"0":                  {UID: 0, GID: 0, Name: "root"},
		"root:0":             {UID: 0, GID: 0, Name: "root"},
		"4000000001:4000002": {UID: 4000000001, GID: 4000002},
	} {
		got, err := LookupRunAs(spec)
		if err != nil || *got != want {
			t.Errorf("LookupRunAs(%q) = %+v, %v; want %+v", spec, got, err, want)
		}
	}
	for _, spec := range []string{"", ":0", "root:", "4000000001", "no-such-user-here", "root:no-such-group-here"} {
		if got, err := LookupRunAs(spec); err == nil {
			t.Errorf("LookupRunAs(%q) = %+v, want an error", spec, got)
		}
	}
}

func TestCgroupFiles(t *testing.T) {
	got := map[string]string{}
	required := map[string]bool{}
	for _, f := range cgroupFiles(Isolation{MemoryBytes: 64 << 20, Pids: 200, CPUWeight: 50}) {
		got[f.name], required[f.name] = f.value, f.required
	}
	want := map[string]string{"memory.max": "67108864", "memory.swap.max": "0", "memory.oom.group": "1", "pids.max": "200", "cpu.weight": "50"}
	if fmt.Sprint(got) != fmt.Sprint(want) || !required["memory.max"] || !required["pids.max"] || !required["cpu.weight"] {
		t.Errorf("limits %v (required %v), want %v", got, required, want)
	}
	// A cgroup left by a worker with other limits is reset.
	for _, f := range cgroupFiles(Isolation{}) {
		if f.required || (f.name != "memory.oom.group" && f.value != "max" && f.value != "100") {
			t.Errorf("zero Isolation writes %s = %s (required %v)", f.name, f.value, f.required)
		}
	}
	if got := missing("cpu io memory pids\n", []string{"memory", "pids", "hugetlb"}); !slices.Equal(got, []string{"hugetlb"}) {
		t.Errorf("missing = %v", got)
	}
	if n := oomKills(t.TempDir()); n != 0 {
		t.Errorf("oomKills of no file = %d", n)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "memory.events"), []byte("low 0\nhigh 0\nmax 3\noom 2\noom_kill 2\noom_group_kill 1\n"), 0o600)
	if n := oomKills(dir); n != 2 {
		t.Errorf("oomKills = %d, want 2", n)
	}
}

func TestCgroupParentMustBeUsable(t *testing.T) {
	// A directory that is not a cgroup: an explicit parent is refused...
	_, err := newIsolator(Isolation{CgroupParent: t.TempDir()}, "t1", t.TempDir(), slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "not a cgroup v2 directory") {
		t.Errorf("newIsolator with a plain directory as CgroupParent = %v", err)
	}
	// The default parent is used when it can be, else rlimits: either
	// way the log line says which.
	var logs logRecorder
	id := fmt.Sprintf("test-%d", time.Now().UnixNano())
	x, err := newIsolator(Isolation{MemoryBytes: 4 << 30}, id, t.TempDir(), logs.logger())
	if err != nil {
		t.Fatal(err)
	}
	if x.group != "" {
		syscall.Rmdir(x.group)
		if len(x.rlimits) != 0 || !strings.Contains(logs.String(), `limits="cgroup v2"`) {
			t.Errorf("cgroup: rlimits %v log:\n%s", x.rlimits, logs.String())
		}
		return
	}
	if len(x.rlimits) != 1 || x.rlimits[0].name != "RLIMIT_AS" || !strings.Contains(logs.String(), "limits=rlimit") ||
		!strings.Contains(logs.String(), "cgroup_unavailable=") {
		t.Errorf("fallback: rlimits %v log:\n%s", x.rlimits, logs.String())
	}
}

func TestChownTreeBudget(t *testing.T) {
	dir := t.TempDir()
	for i := range 5 {
		os.WriteFile(filepath.Join(dir, strconv.Itoa(i)), nil, 0o600)
	}
	uid, gid := os.Getuid(), os.Getgid()
	left := 3
	if _, err := chownTree(dir, uid, gid, &left); !errors.Is(err, errChownBudget) {
		t.Errorf("5 entries on a budget of 3: %v", err)
	}
	left = 5
	if _, err := chownTree(dir, uid, gid, &left); err != nil {
		t.Errorf("5 entries on a budget of 5: %v", err)
	}
	if _, err := chownTree(filepath.Join(dir, "0"), uid, gid, &left); err == nil {
		t.Error("chownTree of a file")
	}
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(dir, link)
	if _, err := chownTree(link, uid, gid, &left); err == nil {
		t.Error("chownTree followed a link at its root")
	}
}
