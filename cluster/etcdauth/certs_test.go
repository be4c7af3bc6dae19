package etcdauth

import (
	"context"
	"crypto/tls"
	"strings"
	"testing"
	"time"

	"github.com/squallstream/squall/cluster/etcdembed"
)

// TestClientCertificatesNameTheUsers runs the certificate setup of the
// package comment: etcd with TLS and client certificate authentication,
// daemons whose certificates' CommonNames are their users (no
// passwords), a worker with a certificate naming no user and its
// topology's password.
func TestClientCertificatesNameTheUsers(t *testing.T) {
	ca := newTestCA(t, "squall-test")
	srvCert, srvKey := ca.issue("etcd-server")
	eps := startEtcd(t, etcdembed.Config{CertFile: srvCert, KeyFile: srvKey, TrustedCAFile: ca.File, ClientCertAuth: true})
	ctx := ctxT(t)
	tlsOf := func(cn string) *tls.Config {
		cert, key := ca.issue(cn)
		return ca.clientTLS(cert, key)
	}
	root := connect(t, eps, "", "", tlsOf(RootUser))
	if err := Enable(ctx, root, Config{ClientCerts: true}); err != nil {
		t.Fatal(err)
	}
	if err := Enable(ctx, root, Config{ClientCerts: true}); err != nil {
		t.Fatalf("Enable again, as root by certificate: %v", err)
	}
	nimbus := connect(t, eps, "", "", tlsOf(NimbusUser))
	sup := connect(t, eps, "", "", tlsOf(SupervisorUser))
	workerTLS := tlsOf("squall-worker")
	anon := connect(t, eps, "", "", workerTLS)

	own := everyKey(mine)
	wantOK(t, "nimbus (by certificate) Put an assignment", put(nimbus, own["assignment"])(ctx))
	wantDenied(t, "supervisor (by certificate) Put an assignment", put(sup, own["assignment"])(ctx))
	wantOK(t, "supervisor (by certificate) Put its registration", put(sup, own["supervisor"])(ctx))
	wantDenied(t, "a certificate naming no user, no password: Get an assignment", get(anon, own["assignment"])(ctx))
	wantDenied(t, "a certificate naming no user, no password: Put a status", put(anon, own["status"])(ctx))

	cred, err := GrantTopology(ctx, root, "", mine)
	if err != nil {
		t.Fatal(err)
	}
	w := connect(t, eps, cred.User, cred.Password, workerTLS)
	wantOK(t, "worker (certificate and password) Put its status", put(w, own["status"])(ctx))
	wantOK(t, "worker (certificate and password) Get its assignment", get(w, own["assignment"])(ctx))
	wantDenied(t, "worker (certificate and password) Put its assignment", put(w, own["assignment"])(ctx))
	wantDenied(t, "worker (certificate and password) Put another topology's status", put(w, everyKey(theirs)["status"])(ctx))

	// Daemons without passwords cannot log in with one.
	if _, err := dial(eps, NimbusUser, "guess", workerTLS); err == nil || !strings.Contains(err.Error(), "authentication failed") {
		t.Errorf("the nimbus user with a password: %v, want authentication failed", err)
	}
	// No certificate: refused in the TLS handshake, whatever the password.
	noCert, err := dial(eps, cred.User, cred.Password, ca.clientTLS("", ""))
	if err == nil {
		defer noCert.Close()
		pctx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
		defer cancel()
		if _, err := noCert.Put(pctx, own["status"], "v"); err == nil {
			t.Error("a client without a certificate wrote")
		}
	}
}
