package nimbus

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/cluster/pki"
	"github.com/squallstream/squall/internal/httpguard"
)

// Defaults of the zero Config's HTTP budgets.
const (
	DefaultMaxArtifactBytes = 512 << 20
	DefaultMaxUploads       = 2
	// maxCodeDownloads bounds the artifact downloads served at once.
	maxCodeDownloads = 8
	// transferTime bounds one artifact upload or download.
	transferTime = 30 * time.Minute
)

// RoleLocal is the identity of a request without a certificate that
// reaches a nimbus with certificates over loopback: it may read (list,
// the cluster page, metrics), as anyone logged in on the nimbus's host
// could read etcd, and nothing else. Off loopback such a request is
// refused.
const RoleLocal = "local"

// identify reads a request's identity from its verified client
// certificate (package pki); a request without one is "local" on
// loopback and has no credentials elsewhere.
func identify(r *http.Request) (httpguard.Identity, error) {
	id, err := pki.HTTPAuthenticator().Authenticate(r)
	if errors.Is(err, httpguard.ErrNoCredentials) && r.TLS != nil && httpguard.LoopbackAddr(r.RemoteAddr) {
		return httpguard.Identity{Role: RoleLocal, Name: r.RemoteAddr}, nil
	}
	return id, err
}

// secure reports whether the nimbus runs with certificates.
func (n *Nimbus) secure() bool { return n.cfg.Bundle != nil }

// allow applies the policy to the identity of r's context; without
// certificates (plain HTTP on loopback) everything is allowed.
func (n *Nimbus) allow(ctx context.Context, action Action, spec *meta.Spec) error {
	if !n.secure() {
		return nil
	}
	id, ok := httpguard.IdentityFrom(ctx)
	if !ok {
		return fmt.Errorf("%w: no identity", ErrForbidden)
	}
	if id.Role == RoleLocal && action != ActionRead {
		// Whatever the policy says: a request without a certificate
		// only reads.
		return fmt.Errorf("%w: %s needs a client or admin certificate (a request without one may only read, and only on loopback)", ErrForbidden, action)
	}
	return n.cfg.Policy.Allow(id, action, spec)
}

// policy adapts the nimbus's Policy to a route that names no topology.
func (n *Nimbus) routePolicy(action Action) httpguard.Policy {
	return func(_ httpguard.Identity, r *http.Request) error { return n.allow(r.Context(), action, nil) }
}

// handler is everything the nimbus serves, behind its guards.
func (n *Nimbus) handler() (http.Handler, error) {
	g := n.guard
	cross, err := g.CrossOrigin()
	if err != nil {
		return nil, err
	}
	read := g.Require(n.routePolicy(ActionRead))
	mux := http.NewServeMux()
	mux.Handle("/code/", httpguard.Chain(n.store.Handler(), g.Require(n.routePolicy(ActionCode)),
		g.Concurrency(maxCodeDownloads), g.Deadlines(0, transferTime)))
	upload := httpguard.Chain(n.apiHandler(), g.Require(n.routePolicy(ActionSubmit)), g.MaxBytes(n.cfg.MaxArtifactBytes),
		g.Concurrency(n.cfg.MaxUploads), g.Deadlines(transferTime, 0))
	mux.Handle("POST /api/topologies/{name}", upload)
	mux.Handle("/api/", n.apiHandler()) // each action checks the policy against the topology's spec
	mux.Handle("GET /metrics", read(n.metricsHandler()))
	mux.Handle("GET /{$}", read(http.HandlerFunc(n.servePage)))
	guarded := httpguard.Chain(mux, cross, g.Authenticate(httpguard.AuthenticatorFunc(identify),
		httpguard.AuthConfig{PlainLoopback: !n.secure()}))
	top := http.NewServeMux()
	top.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok\n")) })
	top.Handle("/", guarded)
	return httpguard.Chain(top, g.Hosts(n.hostNames()...)), nil
}

// hostNames are the names this nimbus answers to: its ID's host (the
// address it advertises) and its listener's.
func (n *Nimbus) hostNames() []string {
	var names []string
	for _, a := range []string{n.cfg.ID, n.ln.Addr().String()} {
		if h, _, err := net.SplitHostPort(a); err == nil {
			names = append(names, h)
		} else {
			names = append(names, a)
		}
	}
	return names
}

// server builds the HTTP server of the nimbus: every budget of
// httpguard, TLS with the nimbus's certificate when it has one.
func (n *Nimbus) server() (*http.Server, error) {
	h, err := n.handler()
	if err != nil {
		return nil, err
	}
	var tc *tls.Config
	if n.secure() {
		tc = n.cfg.Bundle.ServerTLS(false)
	}
	return httpguard.NewServer(h, httpguard.ServerConfig{TLS: tc, Logger: n.cfg.Logger})
}

// errPlainOffLoopback: a nimbus without certificates must listen on
// loopback only.
var errPlainOffLoopback = errors.New("nimbus: without certificates (Config.Bundle) the nimbus serves plain HTTP, on loopback only")
