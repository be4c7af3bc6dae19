package pki

import (
	"fmt"
	"net/http"

	"github.com/squallstream/squall/internal/httpguard"
)

// HTTPAuthenticator reads the identity of an HTTPS request from its
// client certificate's verified chain (IdentityOfChains): the server's
// tls.Config comes from Bundle.ServerTLS. A request without a client
// certificate has no credentials; one whose chain has no identity has
// bad ones.
func HTTPAuthenticator() httpguard.Authenticator {
	return httpguard.AuthenticatorFunc(func(r *http.Request) (httpguard.Identity, error) {
		if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 {
			return httpguard.Identity{}, fmt.Errorf("%w: a client certificate of the cluster is required", httpguard.ErrNoCredentials)
		}
		id, err := IdentityOfChains(r.TLS.VerifiedChains)
		if err != nil {
			return httpguard.Identity{}, fmt.Errorf("%w: %w", httpguard.ErrBadCredentials, err)
		}
		return httpguard.Identity{Role: string(id.Role), Name: id.Name}, nil
	})
}
