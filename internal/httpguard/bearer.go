package httpguard

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"strings"
)

// BearerToken returns an Authenticator that gives id to a request whose
// Authorization header is "Bearer <token>" (the scheme in any case),
// comparing the token in constant time (of digests, so its length does
// not leak either). A request without an Authorization header has no
// credentials; any other value is bad credentials. An empty token
// authenticates nobody. Its challenge is `Bearer realm="squall"`.
func BearerToken(token string, id Identity) Authenticator {
	b := bearer{id: id}
	if token != "" {
		b.want = sha256.Sum256([]byte(token))
		b.set = true
	}
	return b
}

type bearer struct {
	want [sha256.Size]byte
	set  bool
	id   Identity
}

const bearerHint = "a bearer token is required (Authorization: Bearer <token>)"

func (b bearer) Authenticate(r *http.Request) (Identity, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return Identity{}, fmt.Errorf("%w: %s", ErrNoCredentials, bearerHint)
	}
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return Identity{}, fmt.Errorf("%w: %s", ErrBadCredentials, bearerHint)
	}
	got := sha256.Sum256([]byte(tok))
	if subtle.ConstantTimeCompare(got[:], b.want[:]) != 1 || !b.set {
		return Identity{}, fmt.Errorf("%w: wrong token; %s", ErrBadCredentials, bearerHint)
	}
	return b.id, nil
}

func (bearer) Challenge() string { return `Bearer realm="squall"` }
