package httpguard_test

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/squallstream/squall/internal/httpguard"
)

var admin = httpguard.Identity{Role: httpguard.RoleAdmin, Name: "token"}

// whoAmI answers the identity Authenticate established.
var whoAmI = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	id, ok := httpguard.IdentityFrom(r.Context())
	if !ok {
		http.Error(w, "no identity", http.StatusInternalServerError)
		return
	}
	_, _ = w.Write([]byte(id.String()))
})

func request(remote string, hdr map[string]string) *http.Request {
	req := httptest.NewRequest("GET", "/debug/pprof/", nil)
	req.RemoteAddr = remote
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	return req
}

// The rule: off loopback, a request without a verified identity is
// refused 401; on loopback without TLS it goes on as Anonymous only when
// the server opted into plain loopback; wrong credentials are refused
// everywhere.
func TestAuthenticate(t *testing.T) {
	g, rec := newGuard()
	bearer := httpguard.BearerToken("s3cret", admin)
	plain := g.Authenticate(bearer, httpguard.AuthConfig{PlainLoopback: true})(whoAmI)
	strict := g.Authenticate(bearer, httpguard.AuthConfig{})(whoAmI)
	good := map[string]string{"Authorization": "Bearer s3cret"}
	for _, tc := range []struct {
		name   string
		h      http.Handler
		remote string
		hdr    map[string]string
		tls    bool
		code   int
		body   string
	}{
		{"off loopback, no credentials", plain, "192.0.2.1:1234", nil, false, 401, "bearer token is required"},
		{"off loopback, token", plain, "192.0.2.1:1234", good, false, 200, "admin:token"},
		{"off loopback, lower-case scheme", plain, "192.0.2.1:1234", map[string]string{"Authorization": "bearer s3cret"}, false, 200, "admin:token"},
		{"loopback, plain, no credentials", plain, "127.0.0.1:1234", nil, false, 200, "anonymous"},
		{"loopback v6, plain, no credentials", plain, "[::1]:1234", nil, false, 200, "anonymous"},
		{"loopback, plain, TLS, no credentials", plain, "127.0.0.1:1234", nil, true, 401, ""},
		{"loopback, plain, wrong token", plain, "127.0.0.1:1234", map[string]string{"Authorization": "Bearer wrong"}, false, 401, "wrong token"},
		{"loopback, plain, token without scheme", plain, "127.0.0.1:1234", map[string]string{"Authorization": "s3cret"}, false, 401, "invalid credentials"},
		{"loopback, plain, another scheme", plain, "127.0.0.1:1234", map[string]string{"Authorization": "Basic s3cret"}, false, 401, "invalid credentials"},
		{"loopback, plain, token with a prefix", plain, "127.0.0.1:1234", map[string]string{"Authorization": "Bearer s3cret2"}, false, 401, "wrong token"},
		{"loopback, not plain, no credentials", strict, "127.0.0.1:1234", nil, false, 401, "bearer token is required"},
		{"loopback, not plain, token", strict, "127.0.0.1:1234", good, false, 200, "admin:token"},
	} {
		req := request(tc.remote, tc.hdr)
		if tc.tls {
			req.TLS = &tls.ConnectionState{}
		}
		rr := serveDirect(tc.h, req, "")
		if rr.Code != tc.code || !strings.Contains(rr.Body.String(), tc.body) {
			t.Errorf("%s: %d %q, want %d %q", tc.name, rr.Code, rr.Body, tc.code, tc.body)
		}
		if rr.Code == 401 && rr.Header().Get("WWW-Authenticate") != `Bearer realm="squall"` {
			t.Errorf("%s: WWW-Authenticate %q", tc.name, rr.Header().Get("WWW-Authenticate"))
		}
	}
	if n := g.Refusals().Counts()["unauthenticated"]; n != 7 {
		t.Fatalf("unauthenticated refusals %d, want 7", n)
	}
	if r := rec.records()[0]; r["who"] != "192.0.2.1:1234" || r["reason"] != "unauthenticated" || r["status"] != "401" {
		t.Fatalf("refusal log %v", r)
	}
}

// An empty token authenticates nobody ("Bearer " included); an
// authenticator that returns no role or the anonymous one is refused.
func TestAuthenticateMisconfigured(t *testing.T) {
	g, _ := newGuard()
	for name, a := range map[string]httpguard.Authenticator{
		"empty token": httpguard.BearerToken("", admin),
		"no role":     httpguard.BearerToken("t", httpguard.Identity{Name: "x"}),
		"anonymous":   httpguard.BearerToken("t", httpguard.Anonymous()),
	} {
		h := g.Authenticate(a, httpguard.AuthConfig{PlainLoopback: true})(whoAmI)
		for _, v := range []string{"Bearer ", "Bearer", "Bearer t"} {
			if rr := serveDirect(h, request("127.0.0.1:1", map[string]string{"Authorization": v}), ""); rr.Code != 401 {
				t.Errorf("%s, %q: %d %q, want 401", name, v, rr.Code, rr.Body)
			}
		}
	}
	// A nil Authenticator: nobody has credentials.
	h := g.Authenticate(nil, httpguard.AuthConfig{})(whoAmI)
	if rr := serveDirect(h, request("127.0.0.1:1", nil), ""); rr.Code != 401 {
		t.Errorf("nil authenticator: %d", rr.Code)
	}
}

// FirstOf: the first identity wins, bad credentials to any refuse, and
// none anywhere is no credentials.
func TestFirstOf(t *testing.T) {
	other := httpguard.AuthenticatorFunc(func(r *http.Request) (httpguard.Identity, error) {
		if r.Header.Get("X-Test") == "" {
			return httpguard.Identity{}, httpguard.ErrNoCredentials
		}
		return httpguard.Identity{Role: "client", Name: "x"}, nil
	})
	a := httpguard.FirstOf(nil, other, httpguard.BearerToken("s3cret", admin))
	for _, tc := range []struct {
		hdr  map[string]string
		want string
		err  error
	}{
		{map[string]string{"X-Test": "1"}, "client:x", nil},
		{map[string]string{"Authorization": "Bearer s3cret"}, "admin:token", nil},
		{map[string]string{"Authorization": "Bearer nope"}, "", httpguard.ErrBadCredentials},
		{nil, "", httpguard.ErrNoCredentials},
	} {
		id, err := a.Authenticate(request("127.0.0.1:1", tc.hdr))
		if id.String() != tc.want && tc.want != "" || !errors.Is(err, tc.err) && tc.err != nil || tc.err == nil && err != nil {
			t.Errorf("%v: %v %v", tc.hdr, id, err)
		}
	}
	// Bad credentials refuse even when a later authenticator finds an
	// identity, and the refusal is not mistaken for no credentials.
	b := httpguard.FirstOf(httpguard.BearerToken("s3cret", admin), other)
	if id, err := b.Authenticate(request("127.0.0.1:1", map[string]string{"Authorization": "Bearer nope", "X-Test": "1"})); err == nil {
		t.Errorf("a wrong token and another identity: %v", id)
	}
	g, _ := newGuard()
	h := g.Authenticate(httpguard.FirstOf(other, httpguard.BearerToken("s3cret", admin)), httpguard.AuthConfig{PlainLoopback: true})(whoAmI)
	if rr := serveDirect(h, request("127.0.0.1:1", map[string]string{"Authorization": "Bearer nope"}), ""); rr.Code != 401 {
		t.Errorf("a wrong token after an authenticator without credentials: %d %q, want 401", rr.Code, rr.Body)
	}
	if c, ok := a.(httpguard.Challenger); !ok || c.Challenge() == "" {
		t.Fatal("FirstOf lost the bearer challenge")
	}
}

// Require: the policy decides; a refused identity gets 403, a refused
// Anonymous 401 with the way to authenticate; without Authenticate it
// fails closed.
func TestRequire(t *testing.T) {
	g, _ := newGuard()
	certID := httpguard.AuthenticatorFunc(func(r *http.Request) (httpguard.Identity, error) {
		if role := r.Header.Get("X-Role"); role != "" {
			return httpguard.Identity{Role: role, Name: "n"}, nil
		}
		return httpguard.Identity{}, httpguard.ErrNoCredentials
	})
	authn := g.Authenticate(httpguard.FirstOf(certID, httpguard.BearerToken("s3cret", admin)), httpguard.AuthConfig{PlainLoopback: true})
	admins := httpguard.Chain(whoAmI, authn, g.Require(httpguard.Roles(httpguard.RoleAdmin, httpguard.RoleNimbus)))
	anyone := httpguard.Chain(whoAmI, authn, g.Require(httpguard.AnyIdentity))
	authed := httpguard.Chain(whoAmI, authn, g.Require(httpguard.Authenticated))
	for _, tc := range []struct {
		name string
		h    http.Handler
		hdr  map[string]string
		code int
		body string
	}{
		{"admin", admins, map[string]string{"X-Role": "admin"}, 200, "admin:n"},
		{"nimbus", admins, map[string]string{"X-Role": "nimbus"}, 200, "nimbus:n"},
		{"wrong role", admins, map[string]string{"X-Role": "worker"}, 403, "worker:n may not GET /debug/pprof/ (roles allowed: admin, nimbus)"},
		{"token", admins, map[string]string{"Authorization": "Bearer s3cret"}, 200, "admin:token"},
		{"anonymous to admins", admins, nil, 401, "bearer token is required"},
		{"anonymous to anyone", anyone, nil, 200, "anonymous"},
		{"worker to anyone", anyone, map[string]string{"X-Role": "worker"}, 200, "worker:n"},
		{"anonymous to authenticated", authed, nil, 401, "bearer token"},
		{"worker to authenticated", authed, map[string]string{"X-Role": "worker"}, 200, "worker:n"},
		{"no Authenticate", g.Require(httpguard.AnyIdentity)(whoAmI), map[string]string{"X-Role": "admin"}, 401, "no identity"},
	} {
		rr := serveDirect(tc.h, request("127.0.0.1:1", tc.hdr), "")
		if rr.Code != tc.code || !strings.Contains(rr.Body.String(), tc.body) {
			t.Errorf("%s: %d %q, want %d %q", tc.name, rr.Code, rr.Body, tc.code, tc.body)
		}
		if tc.name == "anonymous to admins" && rr.Header().Get("WWW-Authenticate") == "" {
			t.Errorf("%s: no challenge", tc.name)
		}
	}
	c := g.Refusals().Counts()
	if c["forbidden"] != 1 || c["unauthenticated"] != 3 {
		t.Fatalf("counts %v", c)
	}
}

// PeerCertificate over real mutual TLS on loopback: a certificate from
// the CA gives its identity; none gives no credentials (refused, even on
// loopback: the connection is TLS); a certificate the handshake did not
// verify is refused.
func TestPeerCertificate(t *testing.T) {
	pki := newTestPKI(t)
	roleOf := func(chain []*x509.Certificate) (httpguard.Identity, error) {
		c := chain[0]
		if len(chain) != 2 {
			return httpguard.Identity{}, errors.New("not issued by the CA")
		}
		if len(c.Subject.OrganizationalUnit) != 1 {
			return httpguard.Identity{}, errors.New("no role in the certificate")
		}
		if c.Subject.OrganizationalUnit[0] == "none" {
			return httpguard.Identity{Name: c.Subject.CommonName}, nil // a mapping's mistake
		}
		return httpguard.Identity{Role: c.Subject.OrganizationalUnit[0], Name: c.Subject.CommonName}, nil
	}
	g, _ := newGuard()
	h := httpguard.Chain(whoAmI, g.Authenticate(httpguard.PeerCertificate(roleOf), httpguard.AuthConfig{PlainLoopback: true}))
	serve := func(auth tls.ClientAuthType) *httptest.Server {
		ts := httptest.NewUnstartedServer(h)
		ts.TLS = &tls.Config{ClientAuth: auth, ClientCAs: pki.pool}
		ts.StartTLS()
		t.Cleanup(ts.Close)
		return ts
	}
	get := func(ts *httptest.Server, cert *tls.Certificate) (int, string) {
		tr := ts.Client().Transport.(*http.Transport).Clone()
		if cert != nil {
			// Sent whatever the server's acceptable CAs.
			tr.TLSClientConfig.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
		}
		defer tr.CloseIdleConnections()
		req, _ := http.NewRequest("GET", ts.URL+"/", nil)
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}
	verifying := serve(tls.VerifyClientCertIfGiven)
	if code, body := get(verifying, pki.cert(t, "supervisor", "s1", true)); code != 200 || body != "supervisor:s1" {
		t.Errorf("verified certificate: %d %q", code, body)
	}
	if code, body := get(verifying, pki.cert(t, "", "norole", true)); code != 401 || !strings.Contains(body, "no role in the certificate") {
		t.Errorf("certificate without a role: %d %q", code, body)
	}
	if code, body := get(verifying, pki.cert(t, "none", "mistake", true)); code != 401 || !strings.Contains(body, "names no role") {
		t.Errorf("certificate mapped to no role: %d %q", code, body)
	}
	if code, body := get(verifying, nil); code != 401 || !strings.Contains(body, "client certificate is required") {
		t.Errorf("no certificate over TLS on loopback: %d %q", code, body)
	}
	requesting := serve(tls.RequestClientCert)
	if code, body := get(requesting, pki.cert(t, "admin", "a", false)); code != 401 || !strings.Contains(body, "not verified") {
		t.Errorf("unverified certificate: %d %q", code, body)
	}
	if code, body := get(requesting, pki.cert(t, "admin", "a", true)); code != 401 || !strings.Contains(body, "not verified") {
		t.Errorf("a CA certificate the handshake did not verify: %d %q", code, body)
	}
}
