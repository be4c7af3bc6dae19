package main

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/squallstream/squall/internal/nemesis"
)

// daemon is one long-running process of the cluster in a host's
// namespace (an etcd member, a nimbus, a supervisor), started with
// `ip netns exec`, which execs the program in place: the pid is the
// daemon's own. Its output is appended to its log file.
type daemon struct {
	name string
	host nemesis.Host
	role nemesis.Role
	ns   string
	args []string // the program and its arguments
	env  []string
	log  string // log file

	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{}
	paused bool
}

// start starts the daemon (again, after it exited or was killed).
func (d *daemon) start() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cmd != nil && !closed(d.done) {
		return nil
	}
	f, err := os.OpenFile(d.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintf(f, "==== %s: started by the harness\n", time.Now().UTC().Format(time.RFC3339Nano))
	cmd := exec.Command("ip", append([]string{"netns", "exec", d.ns}, d.args...)...)
	cmd.Env = append(os.Environ(), d.env...)
	cmd.Stdout, cmd.Stderr = f, f
	// A process group of its own: a ^C at the terminal reaches the
	// harness, which stops the daemons itself.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", d.name, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }() // owner: the daemon; ends with the process
	d.cmd, d.done, d.paused = cmd, done, false
	return nil
}

func closed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// pid returns the daemon's pid, 0 when it does not run.
func (d *daemon) pid() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cmd == nil || closed(d.done) {
		return 0
	}
	return d.cmd.Process.Pid
}

// kill sends SIGKILL and waits for the exit (a stopped process dies too).
func (d *daemon) kill() {
	d.mu.Lock()
	cmd, done := d.cmd, d.done
	d.paused = false
	d.mu.Unlock()
	if cmd == nil || closed(done) {
		return
	}
	cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
	}
}

// pause sends SIGSTOP; resume sends SIGCONT to a paused daemon.
func (d *daemon) pause() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cmd == nil || closed(d.done) {
		return fmt.Errorf("%s does not run", d.name)
	}
	d.paused = true
	return d.cmd.Process.Signal(syscall.SIGSTOP)
}

func (d *daemon) resume() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.paused && d.cmd != nil && !closed(d.done) {
		d.cmd.Process.Signal(syscall.SIGCONT)
	}
	d.paused = false
}
