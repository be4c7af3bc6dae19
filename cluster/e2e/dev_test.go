package e2e

import (
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/squallstream/squall/cluster/internal/etcdtest"
	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/internal/proctest"
)

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestDev runs `dev`: everything in one process on an embedded etcd, every
// topology submitted and committing; an interrupt stops it all, quietly.
func TestDev(t *testing.T) {
	dir := t.TempDir()
	etcdAddr := freeAddr(t)
	cmd := exec.Command(testprog, "dev", "--data-dir", dir, "--etcd-listen", etcdAddr, "--listen", freeAddr(t))
	var stdout, stderr proctest.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
		for _, pid := range workerProcesses(filepath.Join(dir, "supervisor")) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	if err := eventually(60*time.Second, func() bool { return strings.Contains(stdout.String(), "squall dev:") }); err != nil {
		t.Fatalf("dev did not start:\n%s\n%s", stdout.String(), stderr.String())
	}
	cli := etcdtest.Client(t, []string{etcdAddr})
	k := meta.New("")
	etcdtest.WaitFor(t, cli, k.Statuses(), 60*time.Second, "both topologies committing", func(kv map[string]string) bool {
		n := 0
		for _, v := range kv {
			if strings.Contains(v, `"committed":`) && !strings.Contains(v, `"committed":0,`) {
				n++
			}
		}
		return n == 2
	})
	workers := workerProcesses(filepath.Join(dir, "supervisor"))
	if len(workers) != 2 {
		t.Fatalf("worker processes %v, want 2", workers)
	}
	cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("dev exited with %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("dev did not stop within 60s of SIGINT")
	}
	done <- nil // for the cleanup
	if s := stderr.String(); s != "" {
		t.Errorf("dev's shutdown was not quiet; stderr:\n%s", s)
	}
	for _, pid := range workers {
		if alive(pid) {
			t.Errorf("worker %d outlived dev", pid)
		}
	}
	// Each worker closed what its topology's Build registered.
	if closed, _ := filepath.Glob(filepath.Join(dir, "supervisor", "workers", "*", "closed-at-stop")); len(closed) != 2 {
		t.Errorf("closers run at stop: %v, want one per worker", closed)
	}
}
