package etcdembed

import (
	"crypto/tls"
	"testing"

	"github.com/squallstream/squall/internal/testpki"
)

// testCA is a certificate authority made for one test, its certificates
// in files as etcd's configuration names them (testpki.FileCA).
type testCA struct{ *testpki.FileCA }

func newTestCA(t testing.TB, name string) testCA { return testCA{testpki.NewFileCA(t, name)} }

// issue signs a certificate for cn, valid for loopback, usable as server
// and client; it returns the certificate's and the key's files.
func (ca testCA) issue(cn string) (certFile, keyFile string) { return ca.Issue(cn) }

// clientTLS is a client's TLS configuration trusting the CA, presenting
// the certificate in certFile/keyFile if certFile is not empty.
func (ca testCA) clientTLS(certFile, keyFile string) *tls.Config {
	return ca.ClientConfig(certFile, keyFile)
}
