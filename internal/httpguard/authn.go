package httpguard

import (
	"context"
	"errors"
	"net/http"
)

// AuthConfig configures Authenticate. The zero AuthConfig admits only
// requests with a valid identity.
type AuthConfig struct {
	// PlainLoopback admits a request that carries no credentials as
	// Anonymous when it comes over plain HTTP (no TLS) from a loopback
	// address (its RemoteAddr; LoopbackAddr), for a server an operator
	// explicitly runs on loopback without TLS. Off loopback, or over
	// TLS, such a request is still refused. Policies decide what
	// Anonymous may do (AnyIdentity admits it, Roles does not unless
	// RoleAnonymous is listed).
	PlainLoopback bool
}

// Authenticate returns the middleware that establishes the identity of
// every request with a (nil: nobody has credentials) and puts it in the
// request's context (IdentityFrom), for Require and the handlers. It
// refuses with 401 Unauthorized (and a WWW-Authenticate challenge when a
// is a Challenger):
//   - a request whose credentials are wrong;
//   - a request without credentials, unless cfg.PlainLoopback admits it
//     as Anonymous (no TLS, from loopback);
//   - a request to which a returns an identity without a role, or with
//     RoleAnonymous.
func (g *Guard) Authenticate(a Authenticator, cfg AuthConfig) Middleware {
	if a == nil {
		a = FirstOf()
	}
	var challenge string
	if c, ok := a.(Challenger); ok {
		challenge = c.Challenge()
	}
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id, err := a.Authenticate(r)
			switch {
			case err == nil && (id.Role == "" || id.IsAnonymous()):
				err = errors.New("httpguard: the authenticator returned no role")
			case err == nil:
			case errors.Is(err, ErrNoCredentials) && cfg.PlainLoopback && r.TLS == nil && LoopbackAddr(r.RemoteAddr):
				st := &authState{id: Anonymous(), missing: err, challenge: challenge}
				h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), authKey{}, st)))
				return
			}
			if err != nil {
				if challenge != "" {
					w.Header().Set("WWW-Authenticate", challenge)
				}
				g.refuse(w, r, ReasonUnauthenticated, http.StatusUnauthorized, err.Error())
				return
			}
			st := &authState{id: id}
			h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), authKey{}, st)))
		})
	}
}
