package httpguard_test

import (
	"crypto/tls"
	"crypto/x509"
	"testing"

	"github.com/squallstream/squall/internal/testpki"
)

// testPKI is a throw-away CA for the mutual-TLS tests.
type testPKI struct {
	ca   *testpki.CA
	pool *x509.CertPool
}

func newTestPKI(t *testing.T) *testPKI {
	ca := testpki.NewCA(t, "test CA")
	return &testPKI{ca: ca, pool: ca.Pool()}
}

// cert returns a client certificate with role as its OU (none if empty),
// signed by the CA, or self-signed if fromCA is false.
func (p *testPKI) cert(t *testing.T, role, name string, fromCA bool) *tls.Certificate {
	t.Helper()
	o := testpki.Options{CommonName: name, OrganizationalUnit: role, Client: true}
	if !fromCA {
		cert := testpki.SelfSigned(t, o)
		return &cert
	}
	cert := p.ca.Issue(t, o)
	return &cert
}
