package supervisor

import (
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/cluster/pki"
)

// isolated is a worker that records who it runs as and what it can
// reach: its uid, its descriptor limit, whether it can read its key and
// write beside it; it logs a line and runs until SIGTERM.
const isolated = `#!/bin/sh
echo "$@" > args
while [ $# -gt 0 ]; do
	case "$1" in
	--log-file) log=$2 ;;
	--certs) certs=$2 ;;
	esac
	shift
done
id -u > uid
ulimit -n > nofile
echo '{"level":"INFO","msg":"hello from the isolated worker"}' >> "$log"
if cat "$certs/tls.key" > /dev/null; then echo yes > key-readable; fi
if touch "$certs/planted" 2>/dev/null; then echo yes > certs-writable; fi
trap 'exit 0' TERM
while :; do sleep 0.05; done
`

// TestWorkerRunsAsNobody: a supervisor with certificates and
// Isolation{RunAs: nobody} runs a signed assignment's worker as nobody,
// with its limit, its key readable and its certificate directory not
// writable; its pid file and certificate are out of its directory; the
// log server serves what it logs; a restarted supervisor adopts it; an
// unassigned one is stopped.
func TestWorkerRunsAsNobody(t *testing.T) {
	needRoot(t)
	now := time.Now()
	ca, err := pki.NewAuthority("test", 0, now)
	if err != nil {
		t.Fatal(err)
	}
	nimbus, err := ca.Issue(pki.Request{Role: pki.Nimbus, Name: "n1", Hosts: []string{"127.0.0.1"}, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	sup, err := ca.Issue(pki.Request{Role: pki.Supervisor, Name: "s1", Hosts: []string{"127.0.0.1"}, Now: now})
	if err != nil {
		t.Fatal(err)
	}

	e := newEnv(t)
	code := httptest.NewUnstartedServer(e.srv.Config.Handler)
	code.TLS = nimbus.ServerTLS(false)
	code.StartTLS()
	t.Cleanup(code.Close)
	sum := sha256.Sum256([]byte(isolated))
	dg := hex.EncodeToString(sum[:])
	e.code[dg] = isolated
	e.put(e.keys.Holders("t1", dg)+"n1", code.URL)
	assign := func(slots ...meta.Slot) {
		a := meta.Assignment{Topology: "t1", Artifact: dg, Status: meta.Active, Epoch: 3}
		for _, s := range slots {
			a.Workers = append(a.Workers, meta.Worker{Slot: s})
		}
		if err := a.Sign(nimbus); err != nil {
			t.Fatal(err)
		}
		e.put(e.keys.Assignment("t1"), meta.Encode(a))
	}

	root := t.TempDir()
	for _, d := range []string{filepath.Dir(root), root} {
		os.Chmod(d, 0o711) // the worker user passes them, as it must a real data directory's parents
	}
	dir := filepath.Join(root, "data")
	nobody := &RunAs{UID: 65534, GID: 65534, Name: "nobody"}
	run := func() (*Supervisor, func(), string) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		s, stop := e.run("s1", dir, func(c *Config) {
			c.Bundle, c.Listener, c.Token, c.WorkerHost = sup, ln, "secret", "127.0.0.1"
			c.Isolation = Isolation{RunAs: nobody, OpenFiles: 256}
		})
		return s, stop, "https://" + ln.Addr().String()
	}
	s, stop, logURL := run()
	assign(meta.Slot{Supervisor: "s1", Port: 7000})

	var pid int
	eventually(t, "a worker started", func() bool { pid = pidOf(t, dir, 7000); return pid > 0 && alive(pid) })
	killAtEnd(t, pid)
	if n := s.Starts(); n != 1 {
		t.Errorf("%d starts, want 1", n)
	}
	slot := filepath.Join(dir, "workers", "7000")
	read := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(slot, name))
		return strings.TrimSpace(string(b))
	}
	eventually(t, "the worker's report", func() bool { return read("nofile") != "" && read("key-readable") != "" })
	if got, err := procUIDs(pid); err != nil || got != (workerUIDs{65534, 65534}) {
		t.Errorf("the worker runs as %+v, %v; want 65534", got, err)
	}
	if read("uid") != "65534" || read("nofile") != "256" || read("key-readable") != "yes" || read("certs-writable") != "" {
		t.Errorf("the worker's report: uid %q, nofile %q, key readable %q, certificate directory writable %q; want 65534, 256, yes, no",
			read("uid"), read("nofile"), read("key-readable"), read("certs-writable"))
	}
	certs := filepath.Join(dir, WorkerCertsDir, "7000")
	if args := read("args"); !strings.Contains(args, "--certs "+certs) {
		t.Errorf("the worker's arguments %q do not name %s", args, certs)
	}
	if b, err := pki.LoadBundle(certs); err != nil || b.Identity().Name != pki.WorkerName("t1", 3) {
		t.Errorf("the worker's certificate: %v", err)
	}
	for path, want := range map[string]struct {
		uid, gid uint32
		perm     os.FileMode
	}{
		slot:                               {65534, 65534, 0o700},
		PidFile(dir, 7000):                 {0, 0, 0o600},
		filepath.Join(dir, RecordsDir):     {0, 0, 0o700},
		certs:                              {0, 65534, 0o750},
		filepath.Join(certs, pki.KeyFile):  {0, 65534, 0o640},
		filepath.Join(dir, WorkerCertsDir): {0, 65534, 0o710},
	} {
		if uid, gid, mode := owner(t, path); uid != want.uid || gid != want.gid || mode.Perm() != want.perm {
			t.Errorf("%s: %d:%d %v, want %d:%d %v", path, uid, gid, mode.Perm(), want.uid, want.gid, want.perm)
		}
	}
	for _, name := range []string{legacyRecord, "certs"} {
		if _, err := os.Lstat(filepath.Join(slot, name)); err == nil {
			t.Errorf("the supervisor wrote %s in the slot's directory", name)
		}
	}

	// The log server reads what the worker (nobody) wrote.
	roots := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: sup.Roots(), MinVersion: tls.VersionTLS13}}
	t.Cleanup(roots.CloseIdleConnections)
	req, _ := http.NewRequest("GET", logURL+"/logs/7000?format=text", nil)
	req.Header.Set("Authorization", "Bearer secret")
	resp, err := (&http.Client{Transport: roots}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "hello from the isolated worker") {
		t.Errorf("the worker's log: %d %q", resp.StatusCode, body)
	}

	// A restarted supervisor adopts the worker: same user, same pid.
	stop()
	s2, _, _ := run()
	time.Sleep(300 * time.Millisecond) // a window for a wrong start to show
	if n := s2.Starts(); n != 0 || pidOf(t, dir, 7000) != pid || !alive(pid) {
		t.Fatalf("after a restart: %d starts, pid file %d, worker %d alive %v; want it adopted", n, pidOf(t, dir, 7000), pid, alive(pid))
	}

	// Unassigned: stopped, its pid file removed.
	assign()
	eventually(t, "the worker stopped", func() bool { return !alive(pid) && pidOf(t, dir, 7000) == 0 })
}
