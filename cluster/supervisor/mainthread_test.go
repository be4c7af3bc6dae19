package supervisor

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// The main goroutine keeps the main thread, and TestMain runs on it the
// functions sent to onMain: a test can run code on the main thread.
func init() { runtime.LockOSThread() }

var onMain = make(chan func())

func TestMain(m *testing.M) {
	code := make(chan int)
	go func() { code <- m.Run() }()
	for {
		select {
		case f := <-onMain:
			f()
		case c := <-code:
			os.Exit(c)
		}
	}
}

// runOnMainThread runs f on the process's main thread.
func runOnMainThread(f func()) {
	done := make(chan struct{})
	onMain <- func() { defer close(done); f() }
	<-done
}

// prlimitAs never gives the main thread the worker's real uid: the kernel
// checks signals sent to the process against it, so the worker could
// signal (kill, stop) the supervisor.
func TestPrlimitAsKeepsTheMainThread(t *testing.T) {
	needRoot(t)
	v := victim(t, &syscall.Credential{Uid: 65534, Gid: 65534})
	var onMainThread bool
	var err error
	runOnMainThread(func() {
		onMainThread = unix.Gettid() == unix.Getpid()
		done := make(chan error, 1)
		prlimitAsThread(&RunAs{UID: 65534, GID: 65534}, v.Process.Pid, []rlimit{{unix.RLIMIT_NOFILE, "RLIMIT_NOFILE", 77}}, done)
		err = <-done
	})
	if !onMainThread || err != nil {
		t.Fatalf("on the main thread %v: %v", onMainThread, err)
	}
	limits, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(v.Process.Pid), "limits"))
	if err != nil || !regexp.MustCompile(`(?m)^Max open files +77 +77 `).Match(limits) {
		t.Errorf("the worker's limits (%v):\n%s\nwant 77 open files", err, limits)
	}
	if got, err := procUIDs(os.Getpid()); err != nil || got.Real != uint32(os.Getuid()) {
		t.Errorf("the main thread's uids became %+v (%v)", got, err)
	}
	kill := exec.Command("kill", "-0", strconv.Itoa(os.Getpid()))
	kill.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	if err := kill.Run(); err == nil {
		t.Error("a process of the worker's user may signal the supervisor")
	}
}
