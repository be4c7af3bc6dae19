package httpguard

import (
	"context"
	"errors"
	"net/http"
)

// The roles of squall's identities. A role is a plain string: these are
// the ones the cluster's certificates and the servers' policies share.
const (
	RoleNimbus     = "nimbus"
	RoleSupervisor = "supervisor"
	RoleWorker     = "worker"
	RoleClient     = "client"
	RoleAdmin      = "admin"

	// RoleAnonymous is the role of Anonymous, the identity of a request
	// without credentials on a plain loopback server
	// (AuthConfig.PlainLoopback). No Authenticator may return it.
	RoleAnonymous = "anonymous"
)

// Identity is who a request comes from: a role ("nimbus", "supervisor",
// "worker", "client", "admin") and a name within it (a host, a user).
type Identity struct {
	Role string
	Name string
}

// Anonymous is the identity Authenticate gives a request without
// credentials, where the server allows it (AuthConfig.PlainLoopback).
func Anonymous() Identity { return Identity{Role: RoleAnonymous} }

// IsAnonymous reports whether id is Anonymous.
func (id Identity) IsAnonymous() bool { return id.Role == RoleAnonymous }

// String returns "role:name", or the role alone when the name is empty.
func (id Identity) String() string {
	if id.Name == "" {
		return id.Role
	}
	return id.Role + ":" + id.Name
}

// Errors of authenticators, wrapped with the details.
var (
	// ErrNoCredentials: the request carries none of the credentials the
	// authenticator reads. Authenticate may then admit it as Anonymous
	// (AuthConfig.PlainLoopback).
	ErrNoCredentials = errors.New("httpguard: no credentials")
	// ErrBadCredentials: the request carries credentials, and they are
	// wrong (an unknown token, an unverified certificate, one that names
	// no identity). Such a request is always refused.
	ErrBadCredentials = errors.New("httpguard: invalid credentials")
)

// Authenticator establishes the identity of a request from its
// credentials. It returns an error wrapping ErrNoCredentials when the
// request carries none it reads, and one wrapping ErrBadCredentials (or
// any other error) when they are wrong.
type Authenticator interface {
	Authenticate(r *http.Request) (Identity, error)
}

// AuthenticatorFunc adapts a function to an Authenticator.
type AuthenticatorFunc func(r *http.Request) (Identity, error)

// Authenticate calls f(r).
func (f AuthenticatorFunc) Authenticate(r *http.Request) (Identity, error) { return f(r) }

// Challenger is the optional interface of an Authenticator that names
// its scheme in the WWW-Authenticate header of 401 answers.
type Challenger interface {
	Challenge() string
}

// FirstOf returns an Authenticator that tries each of as in turn (nil
// ones skipped): the first identity found wins; bad credentials given to
// any of them refuse the request; ErrNoCredentials when none found any.
// Its challenge is the first one's that has one.
func FirstOf(as ...Authenticator) Authenticator {
	var live []Authenticator
	for _, a := range as {
		if a != nil {
			live = append(live, a)
		}
	}
	return firstOf(live)
}

type firstOf []Authenticator

func (f firstOf) Authenticate(r *http.Request) (Identity, error) {
	var none []error
	for _, a := range f {
		id, err := a.Authenticate(r)
		switch {
		case err == nil:
			return id, nil
		case errors.Is(err, ErrNoCredentials):
			none = append(none, err)
		default:
			return Identity{}, err
		}
	}
	if len(none) == 0 {
		return Identity{}, ErrNoCredentials
	}
	return Identity{}, errors.Join(none...)
}

func (f firstOf) Challenge() string {
	for _, a := range f {
		if c, ok := a.(Challenger); ok {
			return c.Challenge()
		}
	}
	return ""
}

// authKey is the context key of a request's authState.
type authKey struct{}

// authState is what Authenticate found: the identity, and for Anonymous
// why the request had none (what Require says in a 401) and the
// challenge to send.
type authState struct {
	id        Identity
	missing   error
	challenge string
}

// IdentityFrom returns the identity Authenticate established for the
// request of ctx, and false if it did not run.
func IdentityFrom(ctx context.Context) (Identity, bool) {
	a, ok := ctx.Value(authKey{}).(*authState)
	if !ok {
		return Identity{}, false
	}
	return a.id, true
}
