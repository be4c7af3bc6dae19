package httpguard

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// ErrForbidden is wrapped by the errors of the ready-made policies.
var ErrForbidden = errors.New("httpguard: forbidden")

// Policy decides whether id may make request r: nil admits it, an error
// says why not.
type Policy func(id Identity, r *http.Request) error

// AnyIdentity admits every identity Authenticate established, Anonymous
// included (which exists only where the server opted into
// AuthConfig.PlainLoopback).
func AnyIdentity(Identity, *http.Request) error { return nil }

// Authenticated admits every identity but Anonymous.
func Authenticated(id Identity, r *http.Request) error {
	if id.IsAnonymous() {
		return fmt.Errorf("%w: %s %s needs credentials", ErrForbidden, r.Method, r.URL.Path)
	}
	return nil
}

// Roles returns the policy that admits the identities whose role is one
// of roles.
func Roles(roles ...string) Policy {
	roles = slices.Clone(roles)
	return func(id Identity, r *http.Request) error {
		if slices.Contains(roles, id.Role) {
			return nil
		}
		return fmt.Errorf("%w: %s may not %s %s (roles allowed: %s)", ErrForbidden, id, r.Method, r.URL.Path, strings.Join(roles, ", "))
	}
}

// Require returns the middleware that admits a request only if p admits
// its identity. A refused Anonymous request is answered 401
// Unauthorized (credentials would help: the answer says which, with the
// authenticator's challenge), any other refused identity 403 Forbidden.
// A request whose identity Authenticate did not establish is refused
// with 401: Require fails closed.
func (g *Guard) Require(p Policy) Middleware {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			st, ok := r.Context().Value(authKey{}).(*authState)
			if !ok {
				g.refuse(w, r, ReasonUnauthenticated, http.StatusUnauthorized, "no identity established for this request")
				return
			}
			err := p(st.id, r)
			switch {
			case err == nil:
				h.ServeHTTP(w, r)
			case st.id.IsAnonymous():
				if st.challenge != "" {
					w.Header().Set("WWW-Authenticate", st.challenge)
				}
				msg := "credentials are required"
				if st.missing != nil {
					msg = st.missing.Error()
				}
				g.refuse(w, r, ReasonUnauthenticated, http.StatusUnauthorized, msg)
			default:
				g.refuse(w, r, ReasonForbidden, http.StatusForbidden, err.Error())
			}
		})
	}
}
