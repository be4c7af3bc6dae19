package monitor_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/squallstream/squall/internal/httpguard"
	"github.com/squallstream/squall/monitor"
)

// A page whose name was rebound to 127.0.0.1 sends its own name as
// Host: refused with 421, on the API (JSON) and the UI alike; the
// server's address, loopback names and Config.Hosts pass.
func TestHostRebindingRefused(t *testing.T) {
	reg := monitor.NewRegistry()
	addFake(t, reg, "words")
	ts := serve(t, reg, monitor.Config{Hosts: []string{"monitor.example"}})
	_, port, _ := net.SplitHostPort(ts.Listener.Addr().String())
	for _, path := range []string{"/api/v1/topologies", "/debug/pprof/goroutine?debug=1", "/api/v1/topologies/words/kill"} {
		method := "GET"
		if strings.HasSuffix(path, "kill") {
			method = "POST"
		}
		wantError(t, ts, method, path, map[string]string{"Host": "evil.example:" + port}, http.StatusMisdirectedRequest, "not a name of this server")
	}
	for _, path := range []string{"/", "/metrics"} { // text answers
		if code, _, body := call(t, ts, "GET", path, map[string]string{"Host": "evil.example:" + port}); code != http.StatusMisdirectedRequest {
			t.Fatalf("GET %s with a rebound Host: %d %s", path, code, body)
		}
	}
	for _, host := range []string{"", "localhost:" + port, "monitor.example:" + port} {
		var list monitor.TopologyList
		getJSON(t, ts, "GET", "/api/v1/topologies", map[string]string{"Host": host}, http.StatusOK, &list)
	}
}

// addFake registers a fake topology named name.
func addFake(t *testing.T, reg *monitor.Registry, name string) *fakeTopology {
	t.Helper()
	f := &fakeTopology{name: name, done: make(chan struct{})}
	if err := reg.Add(f, monitor.Options{}); err != nil {
		t.Fatal(err)
	}
	return f
}

// offLoopback sends req to h as a client at 192.0.2.1 would (the
// handler mounted in a server of one's own on a public address).
func offLoopback(h http.Handler, method, path string, hdr map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, nil)
	req.Host = "127.0.0.1"
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rr := httptest.NewRecorder()
	h.ServeHTTP(rr, req)
	return rr
}

// Off loopback, nothing but the probes answers without credentials,
// token or none configured; with the token, everything does.
func TestOffLoopbackNeedsCredentials(t *testing.T) {
	for _, cfg := range []monitor.Config{{}, {Token: "s3cret"}} {
		reg := monitor.NewRegistry()
		addFake(t, reg, "words")
		s, err := monitor.NewServer(reg, cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"/api/v1/topologies", "/metrics", "/version", "/", "/static/htmx.min.js", "/debug/pprof/"} {
			rr := offLoopback(s.Handler(), "GET", path, nil)
			if rr.Code != http.StatusUnauthorized {
				t.Errorf("token %q: GET %s off loopback without credentials: %d, want 401", cfg.Token, path, rr.Code)
			}
			if cfg.Token != "" {
				if rr := offLoopback(s.Handler(), "GET", path, map[string]string{"Authorization": "Bearer s3cret"}); rr.Code != http.StatusOK {
					t.Errorf("GET %s off loopback with the token: %d %s", path, rr.Code, rr.Body)
				}
			}
		}
		for _, path := range []string{"/healthz", "/readyz"} {
			if rr := offLoopback(s.Handler(), "GET", path, nil); rr.Code == http.StatusUnauthorized {
				t.Errorf("probe %s off loopback: %d", path, rr.Code)
			}
		}
	}
}

// With identities (an Authenticator), the profiles, logs and actions are
// the admins'; the other reads anybody's.
func TestIdentitiesAndRoles(t *testing.T) {
	reg := monitor.NewRegistry()
	addFake(t, reg, "words")
	roleHeader := httpguard.AuthenticatorFunc(func(r *http.Request) (httpguard.Identity, error) {
		if role := r.Header.Get("X-Test-Role"); role != "" {
			return httpguard.Identity{Role: role, Name: "test"}, nil
		}
		return httpguard.Identity{}, httpguard.ErrNoCredentials
	})
	ts := serve(t, reg, monitor.Config{Authenticator: roleHeader, LogFile: t.TempDir() + "/log.json", ReadOnly: true})
	admin := map[string]string{"X-Test-Role": "admin"}
	worker := map[string]string{"X-Test-Role": "worker"}
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/goroutine?debug=1", "/api/v1/logs", "/ui/logs"} {
		if code, _, body := call(t, ts, "GET", path, admin); code != http.StatusOK {
			t.Errorf("admin GET %s: %d %s", path, code, body)
		}
		if code, _, _ := call(t, ts, "GET", path, worker); code != http.StatusForbidden {
			t.Errorf("worker GET %s: %d, want 403", path, code)
		}
		if code, _, _ := call(t, ts, "GET", path, nil); code != http.StatusUnauthorized {
			t.Errorf("anonymous GET %s: %d, want 401", path, code)
		}
	}
	wantError(t, ts, "POST", "/api/v1/topologies/words/kill", worker, http.StatusForbidden, "worker:test may not POST")
	wantError(t, ts, "POST", "/api/v1/topologies/words/kill", admin, http.StatusForbidden, "through the nimbus") // ReadOnly, after the role
	for _, hdr := range []map[string]string{worker, nil} {
		var list monitor.TopologyList
		getJSON(t, ts, "GET", "/api/v1/topologies", hdr, http.StatusOK, &list)
	}
}

// A kill declaring a 100 GB body is refused with 413 before it is read,
// and the topology runs on.
func TestDeclaredHugeBodyRefused(t *testing.T) {
	reg := monitor.NewRegistry()
	f := addFake(t, reg, "words")
	ts := serve(t, reg, monitor.Config{})
	c, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(c, "POST /api/v1/topologies/words/kill HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n", ts.Listener.Addr(), int64(100<<30))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	select {
	case <-f.done:
		t.Fatal("the refused kill stopped the topology")
	default:
	}
}

// logRecorder keeps the attributes of every log record.
type logRecorder struct {
	mu   sync.Mutex
	recs []map[string]string
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logRecorder) WithGroup(string) slog.Handler            { return l }
func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	m := map[string]string{"msg": r.Message}
	r.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value.String(); return true })
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs = append(l.recs, m)
	return nil
}

// Refusals are logged by the server's logger and exported as
// squall_http_refused_total{server="monitor",reason}.
func TestRefusalsLoggedAndExported(t *testing.T) {
	reg := monitor.NewRegistry()
	addFake(t, reg, "words")
	rec := &logRecorder{}
	ts := serve(t, reg, monitor.Config{Token: "s3cret", Logger: slog.New(rec)})
	_, port, _ := net.SplitHostPort(ts.Listener.Addr().String())
	call(t, ts, "GET", "/api/v1/topologies", map[string]string{"Host": "evil.example:" + port})
	call(t, ts, "POST", "/api/v1/topologies/words/deactivate", nil)
	call(t, ts, "POST", "/api/v1/topologies/words/deactivate", map[string]string{"Authorization": "Bearer wrong"})
	call(t, ts, "POST", "/api/v1/topologies/words/deactivate", map[string]string{"Sec-Fetch-Site": "cross-site"})
	fams := scrape(t, ts)
	for reason, want := range map[string]float64{"host": 1, "unauthenticated": 2, "cross_origin": 1, "forbidden": 0, "busy": 0, "body_too_large": 0} {
		if v := value(t, fams, "squall_http_refused_total", map[string]string{"server": "monitor", "reason": reason}); v != want {
			t.Errorf("squall_http_refused_total{reason=%q} = %v, want %v", reason, v, want)
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var refusals []map[string]string
	for _, r := range rec.recs {
		if r["msg"] == "httpguard: request refused" {
			refusals = append(refusals, r)
		}
	}
	if len(refusals) != 4 || refusals[0]["reason"] != "host" || refusals[1]["path"] != "/api/v1/topologies/words/deactivate" ||
		refusals[1]["method"] != "POST" || !strings.HasPrefix(refusals[1]["who"], "anonymous@127.0.0.1:") || refusals[0]["server"] != "monitor" {
		t.Fatalf("refusal logs: %v", refusals)
	}
}

func TestConfigValidateGuards(t *testing.T) {
	auth := httpguard.AuthenticatorFunc(func(*http.Request) (httpguard.Identity, error) {
		return httpguard.Identity{}, httpguard.ErrNoCredentials
	})
	if err := (monitor.Config{Addr: "0.0.0.0:0", Authenticator: auth}).Validate(); err != nil {
		t.Errorf("an Authenticator off loopback: %v", err)
	}
	for _, c := range []monitor.Config{{TrustedOrigins: []string{"not an origin"}}} {
		if err := c.Validate(); !errors.Is(err, monitor.ErrInvalid) {
			t.Errorf("%+v: %v, want ErrInvalid", c, err)
		}
	}
}
