package httpguard

import (
	"crypto/x509"
	"fmt"
	"net/http"
)

// PeerCertificate returns an Authenticator that reads the identity of a
// mutual-TLS client from its certificate: roleOf maps the leaf of the
// first verified chain (r.TLS.VerifiedChains) to an Identity, or fails.
// Only a chain the TLS handshake verified counts (the server's
// tls.Config sets ClientCAs and ClientAuth to VerifyClientCertIfGiven
// or RequireAndVerifyClientCert): a certificate that was presented but
// not verified is bad credentials, as is one roleOf refuses or maps to
// no role. A request without TLS or without a client certificate has no
// credentials.
func PeerCertificate(roleOf func(*x509.Certificate) (Identity, error)) Authenticator {
	return AuthenticatorFunc(func(r *http.Request) (Identity, error) {
		switch {
		case r.TLS == nil:
			return Identity{}, fmt.Errorf("%w: not a TLS connection (a client certificate is required)", ErrNoCredentials)
		case len(r.TLS.VerifiedChains) > 0 && len(r.TLS.VerifiedChains[0]) > 0:
		case len(r.TLS.PeerCertificates) > 0:
			return Identity{}, fmt.Errorf("%w: the client certificate was not verified", ErrBadCredentials)
		default:
			return Identity{}, fmt.Errorf("%w: a client certificate is required", ErrNoCredentials)
		}
		leaf := r.TLS.VerifiedChains[0][0]
		id, err := roleOf(leaf)
		if err != nil {
			return Identity{}, fmt.Errorf("%w: certificate %q: %w", ErrBadCredentials, leaf.Subject.CommonName, err)
		}
		if id.Role == "" || id.IsAnonymous() {
			return Identity{}, fmt.Errorf("%w: certificate %q names no role", ErrBadCredentials, leaf.Subject.CommonName)
		}
		return id, nil
	})
}
