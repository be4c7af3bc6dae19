package httpguard_test

import (
	"net/http"
	"strings"
	"testing"
)

// Non-safe cross-origin browser requests are refused (403), a text/plain
// form POST (a "simple" request no preflight stops) included; safe
// methods, same-origin requests, non-browser clients and trusted origins
// pass.
func TestCrossOrigin(t *testing.T) {
	g, _ := newGuard()
	co, err := g.CrossOrigin("https://console.example:8443")
	if err != nil {
		t.Fatal(err)
	}
	h := &ok{}
	ts := serveLocal(t, co(h))
	post := func(method string, hdr map[string]string, body string) int {
		req, _ := http.NewRequest(method, ts.URL+"/api/v1/topologies/t/kill", strings.NewReader(body))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		code, _, _ := do(t, ts, req)
		return code
	}
	refused := []map[string]string{
		{"Sec-Fetch-Site": "cross-site"},
		{"Sec-Fetch-Site": "same-site", "Origin": "https://sub.example"},
		{"Origin": "https://evil.example"},
		{"Origin": "http://localhost:1"}, // not the Host the request was sent to
		{"Sec-Fetch-Site": "cross-site", "Content-Type": "text/plain", "Origin": "null"},
		{"Content-Type": "text/plain", "Origin": "https://evil.example"},
	}
	for _, hdr := range refused {
		if code := post("POST", hdr, "kill=1"); code != http.StatusForbidden {
			t.Errorf("POST %v: %d, want 403", hdr, code)
		}
	}
	if code := post("DELETE", map[string]string{"Sec-Fetch-Site": "cross-site"}, ""); code != http.StatusForbidden {
		t.Errorf("cross-site DELETE: %d, want 403", code)
	}
	if h.count() != 0 {
		t.Fatalf("the handler ran %d times for cross-origin requests", h.count())
	}
	if n := g.Refusals().Counts()["cross_origin"]; n != uint64(len(refused)+1) {
		t.Fatalf("cross_origin refusals %d, want %d", n, len(refused)+1)
	}
	passed := []struct {
		method string
		hdr    map[string]string
	}{
		{"POST", nil}, // curl
		{"POST", map[string]string{"Sec-Fetch-Site": "same-origin"}},
		{"POST", map[string]string{"Sec-Fetch-Site": "none"}}, // typed in the address bar
		{"POST", map[string]string{"Origin": ts.URL}},
		{"POST", map[string]string{"Origin": "https://console.example:8443", "Sec-Fetch-Site": "cross-site"}},
		{"GET", map[string]string{"Sec-Fetch-Site": "cross-site"}},
		{"HEAD", map[string]string{"Origin": "https://evil.example"}},
	}
	for _, p := range passed {
		if code := post(p.method, p.hdr, ""); code != http.StatusOK {
			t.Errorf("%s %v: %d, want 200", p.method, p.hdr, code)
		}
	}
	if _, err := g.CrossOrigin("not an origin"); err == nil {
		t.Fatal("an invalid trusted origin was accepted")
	}
}
