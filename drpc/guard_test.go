package drpc

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/internal/httpguard"
)

// TestGuarded: a DRPC server behind Guarded refuses a cross-site browser
// POST, a rebound Host, a caller off loopback without credentials and a
// wrong token, and answers the legitimate caller.
func TestGuarded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(Config{})
		f := s.Function("echo")
		ctx, cancel := context.WithCancel(context.Background())
		var answering sync.WaitGroup
		defer answering.Wait()
		defer cancel()
		answering.Go(func() { // answers every request with its argument (virtual time)
			for txid := uint64(1); ctx.Err() == nil; {
				if r := f.Next(txid, 0); r != nil {
					f.Answer(txid, [][]any{{r.Args}})
					txid++
					continue
				}
				time.Sleep(time.Millisecond)
			}
		})
		call := func(h http.Handler, mod func(*http.Request)) (int, string) {
			req := httptest.NewRequest("POST", "/drpc/echo", strings.NewReader("hi"))
			req.RemoteAddr = "127.0.0.1:5555"
			req.Host = "127.0.0.1:8080"
			if mod != nil {
				mod(req)
			}
			local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
			req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, local))
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			return w.Code, w.Body.String()
		}
		open, err := s.Guarded(GuardConfig{})
		if err != nil {
			t.Fatal(err)
		}
		if code, body := call(open, nil); code != http.StatusOK || !strings.Contains(body, "hi") {
			t.Fatalf("a loopback caller: %d %s", code, body)
		}
		for name, tc := range map[string]struct {
			mod  func(*http.Request)
			want int
		}{
			"cross-site POST": {func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "cross-site") }, http.StatusForbidden},
			"rebound Host":    {func(r *http.Request) { r.Host = "evil.example" }, http.StatusMisdirectedRequest},
			"off loopback":    {func(r *http.Request) { r.RemoteAddr = "192.0.2.1:5555" }, http.StatusUnauthorized},
		} {
			if code, body := call(open, tc.mod); code != tc.want {
				t.Errorf("%s: %d %s, want %d", name, code, body, tc.want)
			}
		}
		withToken, err := s.Guarded(GuardConfig{Authenticator: httpguard.BearerToken("s3cret", httpguard.Identity{Role: "client", Name: "t"})})
		if err != nil {
			t.Fatal(err)
		}
		bearer := func(tok string) func(*http.Request) {
			return func(r *http.Request) { r.RemoteAddr = "192.0.2.1:5555"; r.Header.Set("Authorization", "Bearer "+tok) }
		}
		if code, _ := call(withToken, bearer("wrong")); code != http.StatusUnauthorized {
			t.Errorf("a wrong token: %d, want 401", code)
		}
		if code, body := call(withToken, bearer("s3cret")); code != http.StatusOK {
			t.Errorf("the right token off loopback: %d %s", code, body)
		}
	})
}
