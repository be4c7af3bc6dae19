// Package testpki makes test certificates for TLS tests: a throw-away
// certificate authority and the certificates it signs, ECDSA P-256, valid
// from an hour ago for a day. It is not for production use: keys live in
// memory (or in a test's temporary directory) and nothing is revoked.
//
// It imports nothing but the standard library, so that the tests of any
// package, however low, can use it.
package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"testing"
	"time"
)

// CA is a certificate authority made for one test.
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// NewCA makes a self-signed CA whose common name is name. It fails t if
// a key or the certificate cannot be made.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := template(t, pkix.Name{CommonName: name})
	tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	cert, _ := sign(t, tmpl, tmpl, key, key)
	return &CA{cert: cert, key: key}
}

// Pool returns a new pool holding the CA's certificate alone: what a
// client's RootCAs or a server's ClientCAs trusts.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// Options describe a certificate to issue. The zero value is a
// certificate with an empty common name, no subject alternative names and
// no extended key usage (which Go's verifier takes as any usage).
type Options struct {
	CommonName         string
	OrganizationalUnit string // the subject's one OU; none if empty
	DNSNames           []string
	IPAddresses        []net.IP
	Server             bool // extended key usage: TLS server authentication
	Client             bool // extended key usage: TLS client authentication
}

// Issue returns a certificate the CA signed, as o describes it, with its
// key and its parsed Leaf. It fails t if it cannot make one.
func (ca *CA) Issue(t testing.TB, o Options) tls.Certificate {
	t.Helper()
	key := newKey(t)
	return pair(t, o, ca.cert, key, ca.key)
}

// SelfSigned returns a certificate as o describes it but signed by its
// own key: one that no CA vouches for.
func SelfSigned(t testing.TB, o Options) tls.Certificate {
	t.Helper()
	key := newKey(t)
	return pair(t, o, nil, key, key)
}

// pair makes the leaf certificate o describes for key, signed by signer
// under parent (under itself if parent is nil).
func pair(t testing.TB, o Options, parent *x509.Certificate, key, signer *ecdsa.PrivateKey) tls.Certificate {
	t.Helper()
	subject := pkix.Name{CommonName: o.CommonName}
	if o.OrganizationalUnit != "" {
		subject.OrganizationalUnit = []string{o.OrganizationalUnit}
	}
	tmpl := template(t, subject)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.DNSNames, tmpl.IPAddresses = o.DNSNames, o.IPAddresses
	if o.Server {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	if o.Client {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	if parent == nil {
		parent = tmpl
	}
	leaf, der := sign(t, tmpl, parent, key, signer)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
}

// template is a certificate of subject with a random serial number,
// valid from an hour ago for a day.
func template(t testing.TB, subject pkix.Name) *x509.Certificate {
	t.Helper()
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	return &x509.Certificate{SerialNumber: serial, Subject: subject,
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour)}
}

// sign signs tmpl for key's public half with signer under parent; it
// returns the certificate parsed and in DER.
func sign(t testing.TB, tmpl, parent *x509.Certificate, key, signer *ecdsa.PrivateKey) (*x509.Certificate, []byte) {
	t.Helper()
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, der
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}
