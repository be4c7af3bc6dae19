package transport

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// testCA is a certificate authority made for one test: ECDSA P-256, valid
// for an hour, as a cluster CA would sign worker certificates.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestCA(t testing.TB, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Minute),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

// issue returns a certificate for a worker: its common name is cn, and it
// is valid for 127.0.0.1 as a server and as a client.
func (ca *testCA) issue(t testing.TB, cn string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// serverTLS is the mutual-TLS config of a server with cert, accepting
// clients whose certificates ca signed.
func (ca *testCA) serverTLS(cert tls.Certificate) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequireAndVerifyClientCert,
		ClientCAs: ca.pool, MinVersion: tls.VersionTLS13}
}

// clientTLS is the mutual-TLS config of a client with cert (none if
// nil), trusting servers whose certificates ca signed.
func (ca *testCA) clientTLS(cert *tls.Certificate) *tls.Config {
	c := &tls.Config{RootCAs: ca.pool, MinVersion: tls.VersionTLS13}
	if cert != nil {
		c.Certificates = []tls.Certificate{*cert}
	}
	return c
}

// peerNamed is a VerifyPeer that accepts only a peer whose certificate's
// common name starts with prefix: how a cluster would check that a peer
// is a worker of its topology and epoch.
func peerNamed(prefix string) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("no certificate")
		}
		if cn := cs.PeerCertificates[0].Subject.CommonName; !strings.HasPrefix(cn, prefix) {
			return fmt.Errorf("certificate of %q, not a worker of %q", cn, prefix)
		}
		return nil
	}
}

// logRecords is a slog.Handler that keeps every record, for tests that
// check what was logged.
type logRecords struct {
	mu      sync.Mutex
	records []slog.Record
	attrs   []slog.Attr
	parent  *logRecords
}

func (h *logRecords) root() *logRecords {
	if h.parent != nil {
		return h.parent.root()
	}
	return h
}

func (h *logRecords) Enabled(context.Context, slog.Level) bool { return true }

func (h *logRecords) Handle(_ context.Context, r slog.Record) error {
	r = r.Clone()
	r.AddAttrs(h.attrs...)
	root := h.root()
	root.mu.Lock()
	root.records = append(root.records, r)
	root.mu.Unlock()
	return nil
}

func (h *logRecords) WithAttrs(as []slog.Attr) slog.Handler {
	return &logRecords{attrs: append(append([]slog.Attr{}, h.attrs...), as...), parent: h}
}

func (h *logRecords) WithGroup(string) slog.Handler { return h }

// refusals returns the refusals logged, each as its attributes by key.
func (h *logRecords) refusals() []map[string]string {
	root := h.root()
	root.mu.Lock()
	defer root.mu.Unlock()
	var out []map[string]string
	for _, r := range root.records {
		if r.Message != "transport: connection refused" {
			continue
		}
		m := map[string]string{"level": r.Level.String()}
		r.Attrs(func(a slog.Attr) bool {
			m[a.Key] = a.Value.String()
			return true
		})
		out = append(out, m)
	}
	return out
}

// text returns every record logged, one per line.
func (h *logRecords) text() string {
	root := h.root()
	root.mu.Lock()
	defer root.mu.Unlock()
	var b bytes.Buffer
	for _, r := range root.records {
		fmt.Fprintf(&b, "%s %s", r.Level, r.Message)
		r.Attrs(func(a slog.Attr) bool {
			fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
			return true
		})
		b.WriteByte('\n')
	}
	return b.String()
}
