package httpguard_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A request whose Host names another server (DNS rebinding: a page of
// evil.example whose name resolves to 127.0.0.1) is refused with 421;
// the listener's own address, loopback names on loopback and the
// configured names pass.
func TestHostsRefusesRebinding(t *testing.T) {
	g, rec := newGuard()
	h := &ok{}
	ts := serveLocal(t, g.Hosts("squall.example")(h))
	port := ts.Listener.Addr().String()[strings.LastIndex(ts.Listener.Addr().String(), ":"):]
	for _, host := range []string{"evil.example", "evil.example" + port, "squall.example.evil.example", "192.0.2.1" + port} {
		req, _ := http.NewRequest("GET", ts.URL+"/debug/pprof/", nil)
		req.Host = host
		code, _, body := do(t, ts, req)
		if code != http.StatusMisdirectedRequest || !strings.Contains(body, "not a name of this server") {
			t.Errorf("Host %q: %d %q, want 421", host, code, body)
		}
	}
	if h.count() != 0 {
		t.Fatalf("the handler ran %d times for refused hosts", h.count())
	}
	for _, host := range []string{ts.Listener.Addr().String(), "localhost" + port, "LOCALHOST", "[::1]" + port, "squall.example", "Squall.Example." + port} {
		req, _ := http.NewRequest("GET", ts.URL+"/", nil)
		req.Host = host
		if code, _, body := do(t, ts, req); code != http.StatusOK {
			t.Errorf("Host %q: %d %q, want 200", host, code, body)
		}
	}
	if g.Refusals().Counts()["host"] != 4 {
		t.Fatalf("counts %v, want 4 host refusals", g.Refusals().Counts())
	}
	recs := rec.records()
	if len(recs) != 4 || recs[0]["reason"] != "host" || recs[0]["path"] != "/debug/pprof/" || recs[0]["method"] != "GET" ||
		!strings.HasPrefix(recs[0]["who"], "127.0.0.1:") || !strings.Contains(recs[0]["why"], "evil.example") || recs[0]["level"] != "WARN" {
		t.Fatalf("refusal logs: %v", recs)
	}
}

// Off loopback, loopback names are not this server's; the address the
// connection arrived on is.
func TestHostsOffLoopback(t *testing.T) {
	g, _ := newGuard()
	h := g.Hosts()(&ok{})
	for host, want := range map[string]int{
		"localhost:80": http.StatusMisdirectedRequest, "127.0.0.1": http.StatusMisdirectedRequest,
		"192.0.2.1:80": http.StatusOK, "192.0.2.1": http.StatusOK, "192.0.2.2:80": http.StatusMisdirectedRequest,
		"": http.StatusMisdirectedRequest,
	} {
		req := httptest.NewRequest("GET", "/", nil)
		req.Host = host
		rr := serveDirect(h, req, "192.0.2.1:80")
		if rr.Code != want {
			t.Errorf("Host %q on 192.0.2.1: %d, want %d", host, rr.Code, want)
		}
		if host == "" && !strings.Contains(rr.Body.String(), "Host header is required") {
			t.Errorf("no Host: %q", rr.Body)
		}
	}
	// Without the local address (served outside an http.Server), only
	// the names pass.
	req := httptest.NewRequest("GET", "/", nil)
	req.Host = "localhost"
	if rr := serveDirect(h, req, ""); rr.Code != http.StatusMisdirectedRequest {
		t.Errorf("no local address: %d", rr.Code)
	}
}
