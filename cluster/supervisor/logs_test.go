package supervisor

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/squallstream/squall/cluster/codestore"
	"github.com/squallstream/squall/cluster/internal/etcdtest"
	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/cluster/pki"
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
	for _, tail := range []string{"-5", "abc", "0", "100000"} {
		if code, body := get("/logs/7000?tail="+tail, "secret"); code != http.StatusBadRequest || !strings.Contains(body, "from 1 to") {
			t.Errorf("tail=%s: %d %q, want 400 naming the bounds", tail, code, body)
		}
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
	if err == nil || !strings.Contains(err.Error(), "is required to serve the workers' logs") {
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

// logServer serves the log handler of a supervisor with the given
// token and bundle over one slot, 7000, whose worker log has a line.
func logServer(t *testing.T, token string, bundle *pki.Bundle) *httptest.Server {
	t.Helper()
	return logServerAt(t, t.TempDir(), token, bundle)
}

// logServerAt is logServer of a supervisor with the data directory dir.
func logServerAt(t *testing.T, dir, token string, bundle *pki.Bundle) *httptest.Server {
	t.Helper()
	s := &Supervisor{cfg: Config{Ports: []int{7000}, DataDir: dir, Token: token, Bundle: bundle},
		log: slog.New(slog.DiscardHandler)}
	if err := os.MkdirAll(s.slotDir(7000), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.slotDir(7000), WorkerLogFile), []byte(`{"msg":"hello"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(nil)
	s.cfg.Listener = ts.Listener
	ts.Config.Handler = s.logHandler()
	if bundle != nil {
		ts.TLS = bundle.ServerTLS(false)
		ts.StartTLS()
	} else {
		ts.Start()
	}
	t.Cleanup(ts.Close)
	return ts
}

func get(t *testing.T, c *http.Client, url string, hdr map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The log server's guards, with a token: the token is required (even on
// loopback), the Host must name the server, and no body is accepted.
func TestLogServerGuards(t *testing.T) {
	ts := logServer(t, "secret", nil)
	c := ts.Client()
	auth := map[string]string{"Authorization": "Bearer secret"}
	if code, body := get(t, c, ts.URL+"/logs/7000", auth); code != http.StatusOK || !strings.Contains(body, "hello") {
		t.Fatalf("with the token: %d %s", code, body)
	}
	for _, hdr := range []map[string]string{nil, {"Authorization": "Bearer wrong"}, {"Authorization": "secret"}} {
		if code, _ := get(t, c, ts.URL+"/logs/7000", hdr); code != http.StatusUnauthorized {
			t.Errorf("%v: %d, want 401", hdr, code)
		}
	}
	if code, _ := get(t, c, ts.URL+"/logs/7000", map[string]string{"Authorization": "Bearer secret", "Host": "evil.example"}); code != http.StatusMisdirectedRequest {
		t.Errorf("a rebound Host: %d, want 421", code)
	}
	req, _ := http.NewRequest("GET", ts.URL+"/logs/7000", strings.NewReader("body"))
	req.Header.Set("Authorization", "Bearer secret")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a request with a body: %d, want 413", resp.StatusCode)
	}

	// Without a token or certificates: open on loopback.
	plain := logServer(t, "", nil)
	if code, body := get(t, plain.Client(), plain.URL+"/logs/7000", nil); code != http.StatusOK {
		t.Fatalf("a plain loopback log server: %d %s", code, body)
	}
}

// With a bundle, the logs are an admin's or a client's: their verified
// certificates pass, other roles are forbidden, no certificate is
// refused.
func TestLogServerCertificates(t *testing.T) {
	now := time.Now()
	ca, err := pki.NewAuthority("test", 0, now)
	if err != nil {
		t.Fatal(err)
	}
	issue := func(role pki.Role, name string, hosts ...string) *pki.Bundle {
		b, err := ca.Issue(pki.Request{Role: role, Name: name, Hosts: hosts, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	sup := issue(pki.Supervisor, "s1", "127.0.0.1")
	ts := logServer(t, "", sup)
	client := func(b *pki.Bundle) *http.Client {
		cfg := b.ClientTLS(pki.Supervisor)
		tr := &http.Transport{TLSClientConfig: cfg}
		t.Cleanup(tr.CloseIdleConnections)
		return &http.Client{Transport: tr}
	}
	worker, err := sup.IssueWorker(pki.WorkerName("t", 1), nil, 0, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		who  *pki.Bundle
		want int
	}{
		{issue(pki.Admin, "alice"), http.StatusOK},
		{issue(pki.Client, "bob"), http.StatusOK},
		{issue(pki.Nimbus, "n1"), http.StatusForbidden},
		{worker, http.StatusForbidden},
	} {
		if code, body := get(t, client(tc.who), ts.URL+"/logs/7000", nil); code != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.who.Identity(), code, body, tc.want)
		}
	}
	anon := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: sup.Roots(), MinVersion: tls.VersionTLS13}}
	defer anon.CloseIdleConnections()
	if code, _ := get(t, &http.Client{Transport: anon}, ts.URL+"/logs/7000", nil); code != http.StatusUnauthorized {
		t.Errorf("no certificate, on loopback: %d, want 401", code)
	}
}
