package testpki

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// verify verifies cert's leaf against pool for usage.
func verify(cert tls.Certificate, pool *x509.CertPool, usage x509.ExtKeyUsage) error {
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return err
	}
	_, err = leaf.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{usage}})
	return err
}

func TestIssue(t *testing.T) {
	ca, other := NewCA(t, "test CA"), NewCA(t, "test CA")
	loopback := []net.IP{net.IPv4(127, 0, 0, 1)}
	cert := ca.Issue(t, Options{CommonName: "topo/w1", OrganizationalUnit: "worker",
		DNSNames: []string{"localhost"}, IPAddresses: loopback, Server: true, Client: true})
	leaf := cert.Leaf
	if leaf == nil || !slices.Equal(leaf.Raw, cert.Certificate[0]) {
		t.Fatal("the Leaf is not the certificate")
	}
	if leaf.Subject.CommonName != "topo/w1" || !slices.Equal(leaf.Subject.OrganizationalUnit, []string{"worker"}) {
		t.Fatalf("subject %v", leaf.Subject)
	}
	if !slices.Equal(leaf.DNSNames, []string{"localhost"}) || len(leaf.IPAddresses) != 1 || !leaf.IPAddresses[0].Equal(loopback[0]) {
		t.Fatalf("names %v %v", leaf.DNSNames, leaf.IPAddresses)
	}
	if now := time.Now(); now.Before(leaf.NotBefore) || now.After(leaf.NotAfter) || leaf.IsCA {
		t.Fatalf("valid %v to %v, CA %v", leaf.NotBefore, leaf.NotAfter, leaf.IsCA)
	}
	for _, u := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
		if err := verify(cert, ca.Pool(), u); err != nil {
			t.Errorf("usage %v: %v", u, err)
		}
	}
	if err := verify(cert, other.Pool(), x509.ExtKeyUsageClientAuth); err == nil {
		t.Error("another CA of the same name vouches for the certificate")
	}
	if _, err := tls.X509KeyPair(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}),
		pemKey(t, cert)); err != nil {
		t.Fatalf("the key is not the certificate's: %v", err)
	}
}

func pemKey(t *testing.T, cert tls.Certificate) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

func TestIssueUsages(t *testing.T) {
	ca := NewCA(t, "test CA")
	client := ca.Issue(t, Options{CommonName: "alice", Client: true})
	if err := verify(client, ca.Pool(), x509.ExtKeyUsageClientAuth); err != nil {
		t.Fatal(err)
	}
	if err := verify(client, ca.Pool(), x509.ExtKeyUsageServerAuth); err == nil {
		t.Error("a client certificate serves")
	}
	server := ca.Issue(t, Options{CommonName: "srv", Server: true})
	if err := verify(server, ca.Pool(), x509.ExtKeyUsageClientAuth); err == nil {
		t.Error("a server certificate is a client's")
	}
	if ou := client.Leaf.Subject.OrganizationalUnit; len(ou) != 0 {
		t.Errorf("OU %v, want none", ou)
	}
}

func TestSelfSigned(t *testing.T) {
	ca := NewCA(t, "test CA")
	cert := SelfSigned(t, Options{CommonName: "mallory", OrganizationalUnit: "admin", Client: true})
	if err := verify(cert, ca.Pool(), x509.ExtKeyUsageClientAuth); err == nil {
		t.Fatal("the CA vouches for a self-signed certificate")
	}
	own := x509.NewCertPool()
	own.AddCert(cert.Leaf)
	if err := verify(cert, own, x509.ExtKeyUsageClientAuth); err != nil {
		t.Fatalf("not signed by its own key: %v", err)
	}
}

// handshake runs a TLS handshake between client and server over a
// loopback connection and returns the server's error, or else the
// client's.
func handshake(t *testing.T, server, client *tls.Config) error {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	errs := make(chan error, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			errs <- err
			return
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		s := tls.Server(conn, server)
		err = s.Handshake()
		if err == nil {
			_, err = s.Write([]byte{1}) // the client reads it once the server has judged its certificate
		}
		errs <- err
	}()
	conn, err := net.DialTimeout("tcp", ln.Addr().String(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	c := tls.Client(conn, client)
	cerr := c.Handshake()
	if cerr == nil {
		_, cerr = c.Read(make([]byte, 1))
	}
	conn.Close()
	if serr := <-errs; serr != nil {
		return serr
	}
	return cerr
}

func TestConfigs(t *testing.T) {
	ca, other := NewCA(t, "test CA"), NewCA(t, "other CA")
	opts := func(cn string) Options {
		return Options{CommonName: cn, Server: true, Client: true, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
	}
	srv, good, stranger := ca.Issue(t, opts("srv")), ca.Issue(t, opts("w1")), other.Issue(t, opts("w1"))
	server := ca.ServerConfig(srv)
	if server.MinVersion != tls.VersionTLS13 || server.ClientAuth != tls.RequireAndVerifyClientCert {
		t.Fatalf("server config %+v", server)
	}
	client := func(cert *tls.Certificate) *tls.Config {
		c := ca.ClientConfig(cert)
		c.ServerName = "127.0.0.1"
		return c
	}
	if c := client(nil); c.MinVersion != tls.VersionTLS13 || len(c.Certificates) != 0 {
		t.Fatalf("client config %+v", c)
	}
	if err := handshake(t, server, client(&good)); err != nil {
		t.Fatalf("a client of the CA: %v", err)
	}
	if err := handshake(t, server, client(nil)); err == nil {
		t.Error("a client without a certificate got through")
	}
	if err := handshake(t, server, client(&stranger)); err == nil {
		t.Error("a client of another CA got through")
	}
	if err := handshake(t, other.ServerConfig(stranger), client(&good)); err == nil {
		t.Error("the client trusted a server of another CA")
	}
}

func TestCommonNamePrefix(t *testing.T) {
	ca := NewCA(t, "test CA")
	state := func(cn string) tls.ConnectionState {
		return tls.ConnectionState{PeerCertificates: []*x509.Certificate{ca.Issue(t, Options{CommonName: cn}).Leaf}}
	}
	check := CommonNamePrefix("topo/e1/")
	if err := check(state("topo/e1/w1")); err != nil {
		t.Fatal(err)
	}
	if err := check(state("topo/e0/w1")); err == nil || !strings.Contains(err.Error(), `"topo/e0/w1"`) {
		t.Fatalf("another epoch's worker: %v", err)
	}
	if err := check(tls.ConnectionState{}); err == nil {
		t.Fatal("no certificate accepted")
	}
}

func TestFileCA(t *testing.T) {
	f := NewFileCA(t, "squall-test")
	certFile, keyFile := f.Issue("alice")
	for _, file := range []string{f.File, certFile, keyFile} {
		st, err := os.Stat(file)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v", file, st.Mode())
		}
	}
	caPEM, err := os.ReadFile(f.File)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		t.Fatal("no certificate in the CA's file")
	}
	c := f.ClientConfig(certFile, keyFile)
	if len(c.Certificates) != 1 || c.MinVersion != tls.VersionTLS12 {
		t.Fatalf("client config %+v", c)
	}
	leaf := c.Certificates[0].Leaf
	if leaf.Subject.CommonName != "alice" || !slices.Equal(leaf.DNSNames, []string{"localhost"}) {
		t.Fatalf("certificate of %v for %v", leaf.Subject, leaf.DNSNames)
	}
	for _, u := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: "127.0.0.1", KeyUsages: []x509.ExtKeyUsage{u}}); err != nil {
			t.Errorf("usage %v: %v", u, err)
		}
	}
	if c := f.ClientConfig("", ""); len(c.Certificates) != 0 || !c.RootCAs.Equal(f.CA.Pool()) {
		t.Fatalf("client config without a certificate %+v", c)
	}
}
