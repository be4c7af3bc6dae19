package drpc

import (
	"log/slog"
	"net/http"

	"github.com/squallstream/squall/internal/httpguard"
)

// GuardConfig is what Guarded puts in front of a Server's handler: the
// guards every squall HTTP server applies (package internal/httpguard).
type GuardConfig struct {
	// Hosts are the names clients reach the server by, besides the
	// address a request arrives on and loopback names on loopback: any
	// other Host header is refused with 421 (DNS rebinding).
	Hosts []string
	// TrustedOrigins are origins whose browser pages may POST requests;
	// other cross-origin browser requests are refused with 403.
	TrustedOrigins []string
	// Authenticator establishes the caller's identity: the client
	// certificate of a mutual-TLS connection (pki.HTTPAuthenticator, with
	// the http.Server's TLSConfig from pki.Bundle.ServerTLS), or a bearer
	// token (httpguard.BearerToken). Nil: only callers on loopback over
	// plain HTTP are served, anonymous; every other is refused with 401.
	Authenticator httpguard.Authenticator
	// Allow decides whether an identity may call (nil: every identity
	// Authenticator establishes).
	Allow httpguard.Policy
	// Logger receives every refusal (nil: none).
	Logger *slog.Logger
}

// Guarded returns s's handler behind cfg's guards: Host allowlist,
// cross-origin protection, authentication and Allow. Serve it with
// HTTPServer, which sets the connection budgets: s.HTTPServer(h).
func (s *Server) Guarded(cfg GuardConfig) (http.Handler, error) {
	g := httpguard.New(httpguard.Config{Server: "drpc", Logger: cfg.Logger, WriteError: httpguard.JSONError})
	cross, err := g.CrossOrigin(cfg.TrustedOrigins...)
	if err != nil {
		return nil, err
	}
	allow := cfg.Allow
	if allow == nil {
		allow = httpguard.AnyIdentity
	}
	return httpguard.Chain(s.Handler(), g.Hosts(cfg.Hosts...), cross,
		g.Authenticate(cfg.Authenticator, httpguard.AuthConfig{PlainLoopback: cfg.Authenticator == nil}), g.Require(allow)), nil
}
