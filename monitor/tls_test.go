package monitor_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/squallstream/squall/internal/httpguard"
	"github.com/squallstream/squall/internal/testpki"
	"github.com/squallstream/squall/monitor"
)

func roleOfOU(chain []*x509.Certificate) (httpguard.Identity, error) {
	c := chain[0]
	if len(c.Subject.OrganizationalUnit) != 1 {
		return httpguard.Identity{}, errors.New("no role")
	}
	return httpguard.Identity{Role: c.Subject.OrganizationalUnit[0], Name: c.Subject.CommonName}, nil
}

// Over mutual TLS the profiles are the admins': an admin's certificate
// reaches them, a worker's is forbidden, no certificate is
// unauthenticated (a TLS connection is never anonymous), and reads need
// a certificate too.
func TestMutualTLSIdentities(t *testing.T) {
	ca := testpki.NewCA(t, "test CA")
	// issue returns a certificate for 127.0.0.1 whose OU is role.
	issue := func(role, name string) tls.Certificate {
		return ca.Issue(t, testpki.Options{CommonName: name, OrganizationalUnit: role,
			IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, Client: true, Server: true})
	}
	s, err := monitor.Start(monitor.NewRegistry(), monitor.Config{
		Authenticator: httpguard.PeerCertificate(roleOfOU),
		TLS: &tls.Config{Certificates: []tls.Certificate{issue("worker", "127.0.0.1")},
			ClientCAs: ca.Pool(), ClientAuth: tls.VerifyClientCertIfGiven},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Close(ctx)
	}()
	if !strings.HasPrefix(s.URL(), "https://") {
		t.Fatalf("URL %s", s.URL())
	}
	get := func(path string, cert *tls.Certificate) int {
		t.Helper()
		cfg := &tls.Config{RootCAs: ca.Pool()}
		if cert != nil {
			cfg.Certificates = []tls.Certificate{*cert}
		}
		tr := &http.Transport{TLSClientConfig: cfg}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr}).Get(s.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}
	admin, worker := issue("admin", "alice"), issue("worker", "w1")
	for _, tc := range []struct {
		path string
		cert *tls.Certificate
		want int
	}{
		{"/debug/pprof/goroutine?debug=1", &admin, 200},
		{"/debug/pprof/goroutine?debug=1", &worker, 403},
		{"/debug/pprof/goroutine?debug=1", nil, 401},
		{"/api/v1/topologies", &worker, 200},
		{"/api/v1/topologies", nil, 401},
		{"/healthz", nil, 200},
	} {
		name := "none"
		if tc.cert != nil {
			name = map[*tls.Certificate]string{&admin: "admin", &worker: "worker"}[tc.cert]
		}
		if got := get(tc.path, tc.cert); got != tc.want {
			t.Errorf("GET %s with %s's certificate: %d, want %d", tc.path, name, got, tc.want)
		}
	}
}

func TestTLSWithoutCertificateInvalid(t *testing.T) {
	if err := (monitor.Config{TLS: &tls.Config{}}).Validate(); !errors.Is(err, monitor.ErrInvalid) {
		t.Fatalf("TLS without a certificate: %v", err)
	}
}
