package topology

import (
	"bytes"
	"crypto/tls"
	"io"
	"log/slog"
	"maps"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/squallstream/squall/internal/testpki"
	"github.com/squallstream/squall/transport"
)

// clusterCA is a certificate authority made for one test, as a cluster's
// CA would sign its workers' certificates (testpki.CA): each worker's
// common name "<topology>/<worker>", valid for 127.0.0.1.
type clusterCA struct{ *testpki.CA }

func newClusterCA(t testing.TB) clusterCA { return clusterCA{testpki.NewCA(t, "cluster CA")} }

func (ca clusterCA) issue(t testing.TB, cn string) tls.Certificate {
	return ca.Issue(t, testpki.Options{CommonName: cn, Server: true, Client: true, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}})
}

// mutualTLS returns a workers.tune that runs every worker's connections
// over mutual TLS with a certificate of its own, accepting peers whose
// certificates name a worker of the same topology.
func (ca clusterCA) mutualTLS(t testing.TB, topology string) func(WorkerID, *WorkerSpec) {
	verify := testpki.CommonNamePrefix(topology + "/")
	return func(w WorkerID, spec *WorkerSpec) {
		cert := ca.issue(t, topology+"/"+string(w))
		spec.Server.TLS, spec.Client.TLS = ca.ServerConfig(cert), ca.ClientConfig(&cert)
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
		Addr: b.Addr().String(), TLS: &tls.Config{Certificates: []tls.Certificate{stranger}, RootCAs: ca.Pool()}})
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
