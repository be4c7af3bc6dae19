package httpguard

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
)

// PeerCertificate returns an Authenticator that reads the identity of a
// mutual-TLS client from its certificate chain: identityOf maps a chain
// the TLS handshake verified (r.TLS.VerifiedChains; leaf first, root
// last) to an Identity, or fails. It receives the whole chain, not the
// leaf alone, because where a certificate sits can be part of who it
// names (a worker's certificate counts only when a supervisor issued
// it). The first verified chain identityOf accepts wins.
//
// Only chains the handshake verified count (the server's tls.Config sets
// ClientCAs and ClientAuth to VerifyClientCertIfGiven or
// RequireAndVerifyClientCert): a certificate that was presented but not
// verified is bad credentials, as are chains identityOf refuses or maps
// to no role. A request without TLS or without a client certificate has
// no credentials.
func PeerCertificate(identityOf func(chain []*x509.Certificate) (Identity, error)) Authenticator {
	return AuthenticatorFunc(func(r *http.Request) (Identity, error) {
		switch {
		case r.TLS == nil:
			return Identity{}, fmt.Errorf("%w: not a TLS connection (a client certificate is required)", ErrNoCredentials)
		case len(r.TLS.VerifiedChains) > 0:
		case len(r.TLS.PeerCertificates) > 0:
			return Identity{}, fmt.Errorf("%w: the client certificate was not verified", ErrBadCredentials)
		default:
			return Identity{}, fmt.Errorf("%w: a client certificate is required", ErrNoCredentials)
		}
		var errs []error
		for _, chain := range r.TLS.VerifiedChains {
			if len(chain) == 0 {
				continue
			}
			id, err := identityOf(chain)
			switch {
			case err != nil:
				errs = append(errs, fmt.Errorf("certificate %q: %w", chain[0].Subject.CommonName, err))
			case id.Role == "" || id.IsAnonymous():
				errs = append(errs, fmt.Errorf("certificate %q names no role", chain[0].Subject.CommonName))
			default:
				return id, nil
			}
		}
		return Identity{}, fmt.Errorf("%w: %w", ErrBadCredentials, errors.Join(errs...))
	})
}
