package transport

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"testing"

	"github.com/squallstream/squall/internal/testpki"
)

// testCA is a certificate authority made for one test, as a cluster CA
// would sign worker certificates (testpki.CA).
type testCA struct{ *testpki.CA }

func newTestCA(t testing.TB, name string) *testCA { return &testCA{testpki.NewCA(t, name)} }

// issue returns a certificate for a worker: its common name is cn, and it
// is valid for 127.0.0.1 as a server and as a client.
func (ca *testCA) issue(t testing.TB, cn string) tls.Certificate {
	return ca.Issue(t, testpki.Options{CommonName: cn, Server: true, Client: true, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}})
}

// serverTLS is the mutual-TLS config of a server with cert, accepting
// clients whose certificates ca signed.
func (ca *testCA) serverTLS(cert tls.Certificate) *tls.Config { return ca.ServerConfig(cert) }

// clientTLS is the mutual-TLS config of a client with cert (none if
// nil), trusting servers whose certificates ca signed.
func (ca *testCA) clientTLS(cert *tls.Certificate) *tls.Config { return ca.ClientConfig(cert) }

// peerNamed is a VerifyPeer that accepts only a peer whose certificate's
// common name starts with prefix: how a cluster would check that a peer
// is a worker of its topology and epoch.
func peerNamed(prefix string) func(tls.ConnectionState) error {
	return testpki.CommonNamePrefix(prefix)
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
