package supervisor

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/squallstream/squall/cluster/codestore"
	"github.com/squallstream/squall/cluster/internal/etcdtest"
	"github.com/squallstream/squall/cluster/meta"
)

// logger is a worker that writes a line to the log file its supervisor
// names, another to its standard error, and sleeps.
const logger = `#!/bin/sh
while [ $# -gt 0 ]; do
	if [ "$1" = "--log-file" ]; then f=$2; fi
	shift
done
echo '{"level":"INFO","msg":"hello from the worker"}' >> "$f"
echo '{"level":"INFO","msg":"something else"}' >> "$f"
echo 'a line on stderr' >&2
exec sleep 1000
`

// TestWorkerLogs: the supervisor advertises its log server, which serves
// a slot's worker log (searched) and output, with the token.
func TestWorkerLogs(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e.run("s1", dir, func(c *Config) { c.Listener, c.Token = ln, "secret" })
	url := "http://" + ln.Addr().String()
	etcdtest.WaitFor(t, e.cli, e.keys.Supervisors(), 10*time.Second, "registration with the log URL", func(kv map[string]string) bool {
		var si meta.SupervisorInfo
		return json.Unmarshal([]byte(kv[e.keys.Supervisor("s1")]), &si) == nil && si.LogURL == url
	})
	e.assign("t1", e.artifact("t1", logger), meta.Slot{Supervisor: "s1", Port: 7000})
	eventually(t, "a worker started", func() bool { pid := pidOf(t, dir, 7000); return pid > 0 && alive(pid) })
	killAtEnd(t, pidOf(t, dir, 7000))

	get := func(path, token string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", url+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	var lines LogLines
	eventually(t, "the worker's log line served", func() bool {
		code, body := get("/logs/7000?q=HELLO", "secret")
		return code == http.StatusOK && json.Unmarshal([]byte(body), &lines) == nil && len(lines.Lines) == 1
	})
	if lines.File != WorkerLogFile || !strings.Contains(lines.Lines[0], "hello from the worker") {
		t.Fatalf("GET /logs/7000?q=HELLO = %+v", lines)
	}
	if code, body := get("/logs/7000?output=1&format=text", "secret"); code != http.StatusOK || body != "a line on stderr\n" {
		t.Fatalf("the worker's output: %d %q", code, body)
	}
	if code, _ := get("/logs/7000", ""); code != http.StatusUnauthorized {
		t.Fatalf("without the token: %d, want 401", code)
	}
	if code, _ := get("/logs/9", "secret"); code != http.StatusNotFound {
		t.Fatalf("a port that is not a slot: %d, want 404", code)
	}
}

// TestLogServerOffLoopbackNeedsAToken: a supervisor refuses to serve the
// logs off loopback without a token.
func TestLogServerOffLoopbackNeedsAToken(t *testing.T) {
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	err = Config{Client: newEnv(t).cli, ID: "s", Ports: []int{1}, DataDir: t.TempDir(), Listener: ln}.Validate()
	if err == nil || !strings.Contains(err.Error(), "Token is required") {
		t.Fatalf("Validate = %v", err)
	}
}

// TestUnusedArtifactsArePruned: once a slot runs another artifact, the
// old one leaves the supervisor's artifact directory; the one in use
// stays.
func TestUnusedArtifactsArePruned(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	s, _ := e.run("s1", dir, func(c *Config) { c.PruneAfter = time.Nanosecond })
	slot := meta.Slot{Supervisor: "s1", Port: 7000}
	v1 := e.artifact("t1", sleeper)
	e.assign("t1", v1, slot)
	eventually(t, "the first version started", func() bool { pid := pidOf(t, dir, 7000); return pid > 0 && alive(pid) })
	killAtEnd(t, pidOf(t, dir, 7000))
	v2 := e.artifact("t1", sleeper+"# v2\n")
	e.assign("t1", v2, slot)
	path := func(a string) string { dg, _ := codestore.ParseDigest(a); return s.artifacts.Path(dg) }
	eventually(t, "the second version started and the first removed", func() bool {
		pid := pidOf(t, dir, 7000)
		_, err1 := os.Stat(path(v1))
		_, err2 := os.Stat(path(v2))
		return pid > 0 && alive(pid) && errors.Is(err1, os.ErrNotExist) && err2 == nil
	})
	killAtEnd(t, pidOf(t, dir, 7000))
}
