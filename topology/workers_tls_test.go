package topology

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/big"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/squallstream/squall/transport"
)

// clusterCA is a certificate authority made for one test, as a cluster's
// CA would sign its workers' certificates: ECDSA P-256, each worker's
// common name "<topology>/<worker>", valid for 127.0.0.1.
type clusterCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newClusterCA(t testing.TB) *clusterCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cluster CA"},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true}
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
	return &clusterCA{cert: cert, key: key, pool: pool}
}

func (ca *clusterCA) issue(t testing.TB, cn string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// mutualTLS returns a workers.tune that runs every worker's connections
// over mutual TLS with a certificate of its own, accepting peers whose
// certificates name a worker of the same topology.
func (ca *clusterCA) mutualTLS(t testing.TB, topology string) func(WorkerID, *WorkerSpec) {
	verify := func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("no certificate")
		}
		if cn := cs.PeerCertificates[0].Subject.CommonName; !strings.HasPrefix(cn, topology+"/") {
			return fmt.Errorf("certificate of %q, not a worker of %s", cn, topology)
		}
		return nil
	}
	return func(w WorkerID, spec *WorkerSpec) {
		cert := ca.issue(t, topology+"/"+string(w))
		spec.Server.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequireAndVerifyClientCert,
			ClientCAs: ca.pool, MinVersion: tls.VersionTLS13}
		spec.Client.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: ca.pool, MinVersion: tls.VersionTLS13}
		spec.Server.VerifyPeer, spec.Client.VerifyPeer = verify, verify
	}
}

// TestWorkersOverMutualTLS runs the word count of TestWorkersWordCount
// with the workers' connections over mutual TLS, passed through
// WorkerSpec; a worker of another topology is refused, and the refusal
// shows in TransportStats.
func TestWorkersOverMutualTLS(t *testing.T) {
	f := newFeed()
	counts := &wordCounts{n: map[string]int{}}
	cfg := DefaultConfig()
	cfg.MaxSpoutPending = 64
	ws := newWorkers(t, wordCountTopology(t, f, counts, 0), cfg, nil,
		map[string]WorkerID{"feed": "a", "count": "a", "split": "b", ackerComponent: "b"})
	ca := newClusterCA(t)
	ws.tune = ca.mutualTLS(t, ws.name)
	const n = 200
	want := map[string]int{}
	addSentences(f, 0, n, want)
	ws.startAll()
	waitUntil(t, 30*time.Second, "every sentence acked", func() bool { a, _ := f.counts(); return a == n })
	ackedOnce(t, f, n)
	if got := counts.get(); !maps.Equal(got, want) {
		t.Fatalf("counts %v, want %v", got, want)
	}

	// A worker of another topology, with a certificate of the same CA.
	stranger := ca.issue(t, "other/b")
	b := ws.running["b"]
	cli, err := transport.NewClient(t.Context(), transport.ClientConfig{Topology: ws.name, Worker: "x", Peer: "b",
		Addr: b.Addr().String(), TLS: &tls.Config{Certificates: []tls.Certificate{stranger}, RootCAs: ca.pool}})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	waitUntil(t, 10*time.Second, "the stranger refused", func() bool {
		st, _ := b.TransportStats()
		return st.RefusedByReason()[transport.ReasonPeer] > 0
	})
	if cli.Stats().Connects != 0 {
		t.Fatalf("a worker of another topology connected: %+v", cli.Stats())
	}
	if _, ok := b.TransportStats(); !ok {
		t.Fatal("no transport stats for a worker")
	}
}

// TestWorkerTransportLogsRefusalsByDefault: with no Config.Logger, a
// worker's transport logs a refused connection to slog.Default(), not to
// the runtime's discarding default.
func TestWorkerTransportLogsRefusalsByDefault(t *testing.T) {
	var buf syncBuffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	defer slog.SetDefault(old)

	f := newFeed()
	ws := newWorkers(t, wordCountTopology(t, f, &wordCounts{n: map[string]int{}}, 0), DefaultConfig(), nil,
		map[string]WorkerID{"feed": "a", "count": "a", "split": "b", ackerComponent: "b"})
	ws.startAll()
	conn, err := net.Dial("tcp", ws.running["b"].Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	conn.Write([]byte("GET / HTTP/1.1\r\n\r\n"))
	io.Copy(io.Discard, conn)
	conn.Close()
	waitUntil(t, 10*time.Second, "the refusal logged", func() bool {
		return strings.Contains(buf.String(), "transport: connection refused") && strings.Contains(buf.String(), "reason=handshake")
	})
	st, _ := ws.running["b"].TransportStats()
	if st.RefusedByReason()[transport.ReasonHandshake] != 1 {
		t.Fatalf("refusals %v", st.RefusedByReason())
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
