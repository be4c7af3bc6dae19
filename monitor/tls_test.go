package monitor_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/squallstream/squall/internal/httpguard"
	"github.com/squallstream/squall/monitor"
)

// testCA issues the certificates of the mutual-TLS test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

// issue returns a certificate for 127.0.0.1 whose OU is role.
func (ca *testCA) issue(t *testing.T, role, name string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:   pkix.Name{CommonName: name, OrganizationalUnit: []string{role}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

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
	ca := newTestCA(t)
	s, err := monitor.Start(monitor.NewRegistry(), monitor.Config{
		Authenticator: httpguard.PeerCertificate(roleOfOU),
		TLS: &tls.Config{Certificates: []tls.Certificate{ca.issue(t, "worker", "127.0.0.1")},
			ClientCAs: ca.pool, ClientAuth: tls.VerifyClientCertIfGiven},
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
		cfg := &tls.Config{RootCAs: ca.pool}
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
	admin, worker := ca.issue(t, "admin", "alice"), ca.issue(t, "worker", "w1")
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
