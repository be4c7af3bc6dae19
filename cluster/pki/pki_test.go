package pki_test

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/squallstream/squall/cluster/pki"
)

var now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func newCA(t *testing.T) *pki.Authority {
	t.Helper()
	ca, err := pki.NewAuthority("test-cluster", 0, now)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

func issue(t *testing.T, ca *pki.Authority, role pki.Role, name string, hosts ...string) *pki.Bundle {
	t.Helper()
	b, err := ca.Issue(pki.Request{Role: role, Name: name, Hosts: hosts, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestIdentities(t *testing.T) {
	ca := newCA(t)
	for _, role := range []pki.Role{pki.Nimbus, pki.Supervisor, pki.Client, pki.Admin} {
		b := issue(t, ca, role, "n-"+string(role))
		id, err := b.Check(now)
		if err != nil {
			t.Fatalf("%s: %v", role, err)
		}
		if id.Role != role || id.Name != "n-"+string(role) {
			t.Fatalf("%s: identity %v", role, id)
		}
	}
	if _, err := ca.Issue(pki.Request{Role: pki.Worker, Name: "w", Now: now}); !errors.Is(err, pki.ErrInvalid) {
		t.Fatalf("the CA issued a worker certificate: %v", err)
	}
	sup := issue(t, ca, pki.Supervisor, "s1")
	w, err := sup.IssueWorker(pki.WorkerName("wordcount", 7), []string{"127.0.0.1"}, 0, now)
	if err != nil {
		t.Fatal(err)
	}
	id, err := w.Check(now)
	if err != nil {
		t.Fatal(err)
	}
	if want := (pki.Identity{Role: pki.Worker, Name: "wordcount@7", Issuer: "s1"}); id != want {
		t.Fatalf("worker identity %v, want %v", id, want)
	}
	// Only supervisors issue, and only workers.
	nim := issue(t, ca, pki.Nimbus, "n1")
	if _, err := nim.IssueWorker("x@1", nil, 0, now); !errors.Is(err, pki.ErrInvalid) {
		t.Fatalf("a nimbus issued a worker certificate: %v", err)
	}
	if _, err := w.IssueWorker("x@1", nil, 0, now); !errors.Is(err, pki.ErrInvalid) {
		t.Fatalf("a worker issued a certificate: %v", err)
	}
	if _, err := w.Check(now.Add(pki.DefaultWorkerValidity + time.Hour)); !errors.Is(err, pki.ErrUntrusted) {
		t.Fatalf("an expired worker certificate: %v", err)
	}
}

// forge signs a certificate of any role with a supervisor's key, as a
// compromised or malicious supervisor would; IdentityOf must refuse any
// role but worker under a supervisor.
func TestSupervisorCannotMintOtherRoles(t *testing.T) {
	ca := newCA(t)
	sup := issue(t, ca, pki.Supervisor, "s1")
	for _, role := range []pki.Role{pki.Nimbus, pki.Admin, pki.Client, pki.Supervisor} {
		forged := forgeUnder(t, sup, role)
		roots := sup.Roots()
		inter := x509.NewCertPool()
		inter.AddCert(sup.Cert)
		chains, err := forged.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}, CurrentTime: now})
		if err != nil {
			t.Fatalf("x509 refused the forged %s certificate (%v): the role check below would go untested", role, err)
		}
		if id, err := pki.IdentityOfChains(chains); !errors.Is(err, pki.ErrUntrusted) {
			t.Fatalf("a supervisor minted %v: %v", id, err)
		}
	}
}

func forgeUnder(t *testing.T, sup *pki.Bundle, role pki.Role) *x509.Certificate {
	t.Helper()
	key := sup.Key // any key will do for the test
	tmpl := &x509.Certificate{SerialNumber: sup.Cert.SerialNumber, Subject: pkix.Name{CommonName: "evil", OrganizationalUnit: []string{string(role)}},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(nil, tmpl, sup.Cert, key.Public(), sup.Key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSignatures(t *testing.T) {
	ca := newCA(t)
	nim := issue(t, ca, pki.Nimbus, "n1")
	msg := []byte("assignment of wordcount, epoch 3")
	sig, err := nim.Sign(msg)
	if err != nil {
		t.Fatal(err)
	}
	id, err := sig.Verify(nim.Roots(), msg, now, pki.Nimbus)
	if err != nil || id.Name != "n1" {
		t.Fatalf("verify: %v %v", id, err)
	}
	if _, err := sig.Verify(nim.Roots(), []byte("assignment of wordcount, epoch 4"), now, pki.Nimbus); !errors.Is(err, pki.ErrUntrusted) {
		t.Fatalf("a changed message verified: %v", err)
	}
	// Signed by a valid identity of the wrong role.
	cl := issue(t, ca, pki.Client, "alice")
	csig, _ := cl.Sign(msg)
	if _, err := csig.Verify(nim.Roots(), msg, now, pki.Nimbus); !errors.Is(err, pki.ErrUntrusted) {
		t.Fatalf("a client's signature passed for a nimbus's: %v", err)
	}
	// Signed by a nimbus of another CA.
	other := issue(t, newCA(t), pki.Nimbus, "n1")
	osig, _ := other.Sign(msg)
	if _, err := osig.Verify(nim.Roots(), msg, now, pki.Nimbus); !errors.Is(err, pki.ErrUntrusted) {
		t.Fatalf("another CA's nimbus verified: %v", err)
	}
	if _, err := (pki.Signature{}).Verify(nim.Roots(), msg, now, pki.Nimbus); !errors.Is(err, pki.ErrUntrusted) {
		t.Fatalf("no signature verified: %v", err)
	}
	// Someone else's certificate with this signature.
	swapped := sig
	swapped.Chain = [][]byte{issue(t, ca, pki.Nimbus, "n2").Cert.Raw}
	if _, err := swapped.Verify(nim.Roots(), msg, now, pki.Nimbus); !errors.Is(err, pki.ErrUntrusted) {
		t.Fatalf("a signature verified under another nimbus's certificate: %v", err)
	}
}

func TestFiles(t *testing.T) {
	dir := t.TempDir()
	ca, err := pki.NewAuthority("files", 0, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := pki.WriteAuthority(filepath.Join(dir, "ca"), ca); err != nil {
		t.Fatal(err)
	}
	if err := pki.WriteAuthority(filepath.Join(dir, "ca"), ca); !errors.Is(err, pki.ErrInvalid) {
		t.Fatalf("a CA was overwritten: %v", err)
	}
	ca2, err := pki.LoadAuthority(filepath.Join(dir, "ca"))
	if err != nil {
		t.Fatal(err)
	}
	sup, err := ca2.Issue(pki.Request{Role: pki.Supervisor, Name: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := sup.IssueWorker("t@1", nil, 0, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := pki.WriteBundle(filepath.Join(dir, "w"), w); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, "w", pki.KeyFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode: %v %v", fi, err)
	}
	got, err := pki.LoadBundle(filepath.Join(dir, "w"))
	if err != nil {
		t.Fatal(err)
	}
	if id := got.Identity(); id.Role != pki.Worker || id.Issuer != "s1" {
		t.Fatalf("loaded identity %v", id)
	}
	// A key that is not the certificate's is refused.
	other, _ := ca2.Issue(pki.Request{Role: pki.Client, Name: "x"})
	if err := pki.WriteBundle(filepath.Join(dir, "x"), other); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "w", pki.KeyFile))
	os.WriteFile(filepath.Join(dir, "x", pki.KeyFile), data, 0o600)
	if _, err := pki.LoadBundle(filepath.Join(dir, "x")); !errors.Is(err, pki.ErrInvalid) {
		t.Fatalf("mismatched key loaded: %v", err)
	}
}

// TestMutualTLS: a server holding a nimbus certificate and a client
// holding a client certificate recognize each other; a client that asks
// for a supervisor refuses the nimbus; a stranger's certificate is
// refused by the server.
func TestMutualTLS(t *testing.T) {
	ca := newCA(t)
	srvB := issue(t, ca, pki.Nimbus, "n1", "127.0.0.1")
	cl := issue(t, ca, pki.Client, "alice")
	srvCfg := srvB.ServerTLS(true)
	srvCfg.Time = func() time.Time { return now }
	ln, err := tls.Listen("tcp", "127.0.0.1:0", srvCfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan error, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				tc := c.(*tls.Conn)
				if err := tc.Handshake(); err != nil {
					got <- err
					return
				}
				id, err := pki.IdentityOfChains(tc.ConnectionState().VerifiedChains)
				if err == nil && id.Name != "alice" {
					err = errors.New("server saw " + id.String())
				}
				got <- err
				io.WriteString(tc, "hi")
			}()
		}
	}()
	dial := func(cfg *tls.Config) error {
		cfg.Time = func() time.Time { return now }
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", ln.Addr().String(), cfg)
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = io.ReadAll(c)
		return err
	}
	if err := dial(cl.ClientTLS(pki.Nimbus)); err != nil {
		t.Fatalf("legitimate client: %v", err)
	}
	if err := <-got; err != nil {
		t.Fatalf("server side: %v", err)
	}
	if err := dial(cl.ClientTLS(pki.Supervisor)); err == nil || !strings.Contains(err.Error(), "not a supervisor") {
		t.Fatalf("client accepted a nimbus as a supervisor: %v", err)
	}
	<-got
	stranger := issue(t, newCA(t), pki.Client, "mallory")
	cfg := stranger.ClientTLS()
	cfg.RootCAs = srvB.Roots() // trusts the server, but is unknown to it
	if err := dial(cfg); err == nil {
		t.Fatal("a stranger's certificate was accepted")
	}
	if err := <-got; err == nil {
		t.Fatal("server handshake with a stranger succeeded")
	}
}

// TestPeerTLS: two workers of one topology and epoch connect; a worker
// of another epoch, a nimbus and a stranger's worker are refused by both
// ends.
func TestPeerTLS(t *testing.T) {
	ca := newCA(t)
	sup := issue(t, ca, pki.Supervisor, "s1")
	worker := func(name string, sup *pki.Bundle) *pki.Bundle {
		b, err := sup.IssueWorker(name, nil, 0, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	accept := func(want string) func(pki.Identity) error {
		return func(id pki.Identity) error {
			if id.Role != pki.Worker || id.Name != want {
				return errors.New("not a peer: " + id.String())
			}
			return nil
		}
	}
	a := worker("wc@3", sup)
	srvCfg, _ := a.PeerTLS(accept("wc@3"))
	ln, err := tls.Listen("tcp", "127.0.0.1:0", srvCfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	serverErr := make(chan error, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			err = c.(*tls.Conn).Handshake()
			if err == nil {
				_, err = io.WriteString(c, "ok")
			}
			c.Close()
			serverErr <- err
		}
	}()
	dial := func(b *pki.Bundle) (clientErr, srvErr error) {
		_, cfg := b.PeerTLS(accept("wc@3"))
		c, err := tls.Dial("tcp", ln.Addr().String(), cfg)
		if err == nil {
			_, err = io.ReadAll(c)
			c.Close()
		}
		return err, <-serverErr
	}
	if ce, se := dial(worker("wc@3", issue(t, ca, pki.Supervisor, "s2"))); ce != nil || se != nil {
		t.Fatalf("a peer of another supervisor was refused: client %v, server %v", ce, se)
	}
	for name, b := range map[string]*pki.Bundle{
		"another epoch":     worker("wc@2", sup),
		"another topology":  worker("other@3", sup),
		"a nimbus":          issue(t, ca, pki.Nimbus, "wc@3"),
		"another CA's peer": worker("wc@3", issue(t, newCA(t), pki.Supervisor, "s1")),
	} {
		if _, se := dial(b); se == nil {
			t.Errorf("%s: the server accepted it", name)
		}
	}
}
