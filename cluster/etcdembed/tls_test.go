package etcdembed

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// tlsClient connects to endpoints over TLS with tc; the client closes
// when the test ends.
func tlsClient(t *testing.T, endpoints []string, tc *tls.Config) *clientv3.Client {
	t.Helper()
	var eps []string
	for _, ep := range endpoints {
		eps = append(eps, "https://"+ep)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: eps, TLS: tc, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// putWithin tries one Put, bounded by d.
func putWithin(cli *clientv3.Client, d time.Duration, key, val string) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	_, err := cli.Put(ctx, key, val)
	return err
}

// handshake dials addr with tc and reads once: the error the server's
// TLS refusal gives the client (nil if the server accepted it).
func handshake(addr string, tc *tls.Config) error {
	d := &net.Dialer{Timeout: 5 * time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", addr, tc)
	if err != nil {
		return err
	}
	defer conn.Close()
	// In TLS 1.3 the server judges the client's certificate after the
	// client has finished its side: the refusal arrives as an alert on
	// the first read. An accepted client reads nothing (the server waits
	// for a request) until the deadline.
	conn.SetDeadline(time.Now().Add(time.Second))
	_, err = conn.Read(make([]byte, 1))
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

func TestTrustedCARefusesClientsWithoutACertificateOfItsCA(t *testing.T) {
	ca, rogue := newTestCA(t, "squall-test"), newTestCA(t, "rogue")
	srvCert, srvKey := ca.issue("etcd-server")
	cliCert, cliKey := ca.issue("alice")
	rogueCert, rogueKey := rogue.issue("mallory")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := Start(ctx, Config{Dir: t.TempDir(), CertFile: srvCert, KeyFile: srvKey, TrustedCAFile: ca.File, ClientCertAuth: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ep := s.Endpoints()[0]
	if !strings.HasPrefix(ep, "127.0.0.1:") {
		t.Fatalf("Endpoints = %v, want a loopback address", s.Endpoints())
	}

	// The TLS handshake itself: refused without a certificate, and with
	// one of another CA; accepted with one of the trusted CA.
	if err := handshake(ep, ca.clientTLS("", "")); err == nil || !strings.Contains(err.Error(), "certificate required") {
		t.Errorf("handshake without a client certificate: %v, want the server's 'certificate required' alert", err)
	}
	if err := handshake(ep, ca.clientTLS(rogueCert, rogueKey)); err == nil {
		t.Error("handshake with a certificate of another CA succeeded")
	}
	if err := handshake(ep, ca.clientTLS(cliCert, cliKey)); err != nil {
		t.Errorf("handshake with a certificate of the trusted CA: %v", err)
	}

	// etcd's client: the same three.
	if err := putWithin(tlsClient(t, s.Endpoints(), ca.clientTLS("", "")), 1500*time.Millisecond, "k", "v"); err == nil {
		t.Error("a client without a certificate wrote")
	}
	if err := putWithin(tlsClient(t, s.Endpoints(), ca.clientTLS(rogueCert, rogueKey)), 1500*time.Millisecond, "k", "v"); err == nil {
		t.Error("a client with a certificate of another CA wrote")
	}
	good := tlsClient(t, s.Endpoints(), ca.clientTLS(cliCert, cliKey))
	if err := putWithin(good, 10*time.Second, "k", "v"); err != nil {
		t.Fatalf("a client with a certificate of the trusted CA: %v", err)
	}
	resp, err := good.Get(ctx, "k")
	if err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "v" {
		t.Fatalf("Get k = %v, %v; want v", resp, err)
	}

	// Plain HTTP is not served on the TLS port.
	plain, err := clientv3.New(clientv3.Config{Endpoints: s.Endpoints(), DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if err := putWithin(plain, 1500*time.Millisecond, "k", "plain"); err == nil {
		t.Error("a plaintext client wrote to the TLS port")
	}
}

// TestClientCertAuthTakesTheCommonNameAsTheUser: with etcd's
// authentication enabled, a client presenting no password is the user its
// certificate names.
func TestClientCertAuthTakesTheCommonNameAsTheUser(t *testing.T) {
	ca := newTestCA(t, "squall-test")
	srvCert, srvKey := ca.issue("etcd-server")
	rootCert, rootKey := ca.issue("root")
	aliceCert, aliceKey := ca.issue("alice")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := Start(ctx, Config{Dir: t.TempDir(), CertFile: srvCert, KeyFile: srvKey, TrustedCAFile: ca.File, ClientCertAuth: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	root := tlsClient(t, s.Endpoints(), ca.clientTLS(rootCert, rootKey))
	alice := tlsClient(t, s.Endpoints(), ca.clientTLS(aliceCert, aliceKey))
	if _, err := root.UserAddWithOptions(ctx, "root", "", &clientv3.UserAddOptions{NoPassword: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := root.UserGrantRole(ctx, "root", "root"); err != nil {
		t.Fatal(err)
	}
	if _, err := root.AuthEnable(ctx); err != nil {
		t.Fatal(err)
	}
	if err := putWithin(root, 10*time.Second, "k", "by root"); err != nil {
		t.Fatalf("the client whose certificate names root: %v", err)
	}
	if err := putWithin(alice, 10*time.Second, "k", "by alice"); !errors.Is(err, rpctypes.ErrPermissionDenied) {
		t.Fatalf("the client whose certificate names alice (no such user): %v, want permission denied", err)
	}
}

func TestTLSWithoutClientCertAuthServesClientsWithoutCertificates(t *testing.T) {
	ca := newTestCA(t, "squall-test")
	srvCert, srvKey := ca.issue("etcd-server")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := Start(ctx, Config{Dir: t.TempDir(), CertFile: srvCert, KeyFile: srvKey})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := putWithin(tlsClient(t, s.Endpoints(), ca.clientTLS("", "")), 10*time.Second, "k", "v"); err != nil {
		t.Fatalf("TLS client without a certificate, no client-cert-auth: %v", err)
	}
}

func TestPeerClientCertAuthRefusesPeersWithoutACertificateOfItsCA(t *testing.T) {
	ca, rogue := newTestCA(t, "squall-peers"), newTestCA(t, "rogue")
	peerCert, peerKey := ca.issue("m1")
	rogueCert, rogueKey := rogue.issue("m2")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := Start(ctx, Config{Dir: t.TempDir(), PeerCertFile: peerCert, PeerKeyFile: peerKey,
		PeerTrustedCAFile: ca.File, PeerClientCertAuth: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if len(s.etcd.Peers) != 1 {
		t.Fatalf("%d peer listeners, want 1", len(s.etcd.Peers))
	}
	peer := s.etcd.Peers[0].Listener.Addr().String()

	get := func(tc *tls.Config) (int, error) {
		tr := &http.Transport{TLSClientConfig: tc}
		defer tr.CloseIdleConnections()
		hc := &http.Client{Transport: tr, Timeout: 5 * time.Second}
		resp, err := hc.Get("https://" + peer + "/members")
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	if code, err := get(ca.clientTLS("", "")); err == nil {
		t.Errorf("GET /members on the peer port without a certificate: status %d, want a refused handshake", code)
	}
	if code, err := get(ca.clientTLS(rogueCert, rogueKey)); err == nil {
		t.Errorf("GET /members on the peer port with another CA's certificate: status %d, want a refused handshake", code)
	}
	if code, err := get(ca.clientTLS(peerCert, peerKey)); err != nil || code != http.StatusOK {
		t.Errorf("GET /members on the peer port with a peer certificate: %d, %v; want 200", code, err)
	}
	// The client side stays plain HTTP on loopback.
	cli, err := clientv3.New(clientv3.Config{Endpoints: s.Endpoints(), DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if err := putWithin(cli, 10*time.Second, "k", "v"); err != nil {
		t.Fatalf("plain client of a member with peer TLS: %v", err)
	}
}

// awaitPeerConnections waits until the HTTP connections members of a
// multi-node cluster opened to each other have ended, or fails the test
// after timeout. etcd's server never closes the idle connections of its
// peer round tripper (version checks); the stopped member's side ends
// them a few seconds after Close, and goleak (TestMain) must not see
// them. This waits for real network timeouts inside etcd: there is no
// clock to advance.
func awaitPeerConnections(t *testing.T, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	buf := make([]byte, 1<<20)
	for {
		stacks := string(buf[:runtime.Stack(buf, true)])
		if !strings.Contains(stacks, "net/http.(*persistConn)") && !strings.Contains(stacks, "cmux.(*MuxConn)") {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("the members' peer connections still run %v after Close", timeout)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// freePorts returns n loopback ports that were free a moment ago.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	for _, ln := range lns {
		ln.Close()
	}
	return ports
}

// TestThreeMembersWithTLSEverywhere runs the secured three-member setup
// of docs/cluster.md: TLS with certificate authentication on the client
// and on the peer URLs of every member.
func TestThreeMembersWithTLSEverywhere(t *testing.T) {
	ca := newTestCA(t, "squall-etcd")
	ports := freePorts(t, 6)
	names := []string{"m1", "m2", "m3"}
	var cluster []string
	for i, n := range names {
		cluster = append(cluster, fmt.Sprintf("%s=https://127.0.0.1:%d", n, ports[2*i+1]))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	servers := make([]*Server, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		cert, key := ca.issue(n)
		c := Config{Dir: t.TempDir(), Name: n, ClusterToken: "tls-test",
			ClientURL: fmt.Sprintf("https://127.0.0.1:%d", ports[2*i]), PeerURL: fmt.Sprintf("https://127.0.0.1:%d", ports[2*i+1]),
			InitialCluster: strings.Join(cluster, ","),
			CertFile:       cert, KeyFile: key, TrustedCAFile: ca.File, ClientCertAuth: true,
			PeerCertFile: cert, PeerKeyFile: key, PeerTrustedCAFile: ca.File, PeerClientCertAuth: true}
		wg.Go(func() { servers[i], errs[i] = Start(ctx, c) })
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, s := range servers {
			if s != nil {
				s.Close()
			}
		}
		awaitPeerConnections(t, 20*time.Second)
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("member %s: %v", names[i], err)
		}
	}
	cert, key := ca.issue("client")
	first := tlsClient(t, servers[0].Endpoints(), ca.clientTLS(cert, key))
	last := tlsClient(t, servers[2].Endpoints(), ca.clientTLS(cert, key))
	if err := putWithin(first, 10*time.Second, "k", "through m1"); err != nil {
		t.Fatal(err)
	}
	resp, err := last.Get(ctx, "k") // linearizable: through the leader, over the peers' TLS
	if err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "through m1" {
		t.Fatalf("Get k on m3 = %v, %v; want the value written on m1", resp, err)
	}
	members, err := last.MemberList(ctx)
	if err != nil || len(members.Members) != 3 {
		t.Fatalf("MemberList = %v, %v; want 3 members", members, err)
	}
	for _, m := range members.Members {
		for _, u := range m.PeerURLs {
			if !strings.HasPrefix(u, "https://") {
				t.Errorf("member %s peer URL %s, want https", m.Name, u)
			}
		}
	}
}
