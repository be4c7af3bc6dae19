package etcdauth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// testCA is a certificate authority made for one test, ECDSA P-256.
type testCA struct {
	t    testing.TB
	dir  string
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	File string // the CA certificate, PEM
}

func newTestCA(t testing.TB, name string) *testCA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          serial(t),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ca := &testCA{t: t, dir: t.TempDir(), cert: cert, key: key}
	ca.File = ca.write(name+"-ca.pem", "CERTIFICATE", der)
	return ca
}

// issue signs a certificate for cn, valid for loopback, usable as server
// and client; it returns the certificate's and the key's files.
func (ca *testCA) issue(cn string) (certFile, keyFile string) {
	ca.t.Helper()
	key := newKey(ca.t)
	tmpl := &x509.Certificate{
		SerialNumber: serial(ca.t),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		ca.t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		ca.t.Fatal(err)
	}
	return ca.write(cn+".pem", "CERTIFICATE", der), ca.write(cn+"-key.pem", "EC PRIVATE KEY", kder)
}

// pool is a pool of the CA's certificate alone.
func (ca *testCA) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// clientTLS is a client's TLS configuration trusting the CA, presenting
// the certificate in certFile/keyFile if certFile is not empty.
func (ca *testCA) clientTLS(certFile, keyFile string) *tls.Config {
	ca.t.Helper()
	c := &tls.Config{RootCAs: ca.pool(), MinVersion: tls.VersionTLS12}
	if certFile != "" {
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			ca.t.Fatal(err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c
}

func (ca *testCA) write(name, typ string, der []byte) string {
	ca.t.Helper()
	f := filepath.Join(ca.dir, name)
	if err := os.WriteFile(f, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		ca.t.Fatal(err)
	}
	return f
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func serial(t testing.TB) *big.Int {
	t.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
