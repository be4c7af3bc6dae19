package pki

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"time"
)

// Bundle is one holder's credentials: its certificate (with the
// intermediates between it and the CA), its private key, and the CA it
// trusts.
type Bundle struct {
	Cert          *x509.Certificate
	Intermediates []*x509.Certificate // a worker's supervisor; none otherwise
	Key           crypto.Signer
	CA            *x509.Certificate
}

// Identity is the bundle's own identity.
func (b *Bundle) Identity() Identity {
	id, err := IdentityOf(b.chain())
	if err != nil {
		id, _ = roleOf(b.Cert)
	}
	return id
}

func (b *Bundle) chain() []*x509.Certificate {
	out := append([]*x509.Certificate{b.Cert}, b.Intermediates...)
	return append(out, b.CA)
}

// Roots is a pool holding the bundle's CA.
func (b *Bundle) Roots() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(b.CA)
	return p
}

// Certificate is the bundle as crypto/tls presents it.
func (b *Bundle) Certificate() tls.Certificate {
	c := tls.Certificate{PrivateKey: b.Key, Leaf: b.Cert, Certificate: [][]byte{b.Cert.Raw}}
	for _, in := range b.Intermediates {
		c.Certificate = append(c.Certificate, in.Raw)
	}
	return c
}

// Check verifies the bundle against its own CA at now: the chain is valid
// and has an identity, and the key belongs to the certificate.
func (b *Bundle) Check(now time.Time) (Identity, error) {
	if b.Cert == nil || b.Key == nil || b.CA == nil {
		return Identity{}, fmt.Errorf("%w: incomplete bundle", ErrInvalid)
	}
	if !publicKeysEqual(b.Cert.PublicKey, b.Key.Public()) {
		return Identity{}, fmt.Errorf("%w: the private key does not belong to certificate %q", ErrInvalid, b.Cert.Subject)
	}
	return verifyChain(b.Roots(), b.Cert, b.Intermediates, now)
}

func publicKeysEqual(a, b crypto.PublicKey) bool {
	type equaler interface{ Equal(crypto.PublicKey) bool }
	e, ok := a.(equaler)
	return ok && e.Equal(b)
}

// verifyChain verifies leaf (with intermediates) against roots at now and
// returns its identity.
func verifyChain(roots *x509.CertPool, leaf *x509.Certificate, intermediates []*x509.Certificate, now time.Time) (Identity, error) {
	inter := x509.NewCertPool()
	for _, c := range intermediates {
		inter.AddCert(c)
	}
	chains, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, CurrentTime: now,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
	if err != nil {
		return Identity{}, fmt.Errorf("%w: certificate %q: %v", ErrUntrusted, leaf.Subject, err)
	}
	return IdentityOfChains(chains)
}

// ServerTLS is the configuration of a server holding this bundle: TLS 1.3,
// client certificates verified against the CA when given (requireClient:
// always required). Handlers read the client's identity with
// IdentityOfChains(r.TLS.VerifiedChains).
func (b *Bundle) ServerTLS(requireClient bool) *tls.Config {
	auth := tls.VerifyClientCertIfGiven
	if requireClient {
		auth = tls.RequireAndVerifyClientCert
	}
	cert := b.Certificate()
	return &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{cert}, ClientAuth: auth, ClientCAs: b.Roots(),
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.VerifiedChains) == 0 {
				return nil // no client certificate (allowed unless required)
			}
			_, err := IdentityOfChains(cs.VerifiedChains)
			return err
		}}
}

// ClientTLS is the configuration of a client holding this bundle that
// accepts only servers of the given roles (any role when none is given).
// The server's host name is checked against its certificate as usual.
func (b *Bundle) ClientTLS(want ...Role) *tls.Config {
	cert := b.Certificate()
	return &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{cert}, RootCAs: b.Roots(),
		VerifyConnection: func(cs tls.ConnectionState) error {
			id, err := IdentityOfChains(cs.VerifiedChains)
			if err != nil {
				return err
			}
			if !hasRole(id, want) {
				return fmt.Errorf("%w: server %s is not a %s", ErrUntrusted, id, roleList(want))
			}
			return nil
		}}
}

// PeerTLS returns the configurations of both ends of a connection
// between peers that know each other by identity rather than by host
// name (the workers of one topology and epoch): each end requires the
// other's certificate, verifies its chain against the CA, and accepts it
// only if accept returns nil for its identity. Host names are not
// checked: the identity is what counts.
func (b *Bundle) PeerTLS(accept func(Identity) error) (server, client *tls.Config) {
	roots := b.Roots()
	check := func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return fmt.Errorf("%w: the peer presented no certificate", ErrUntrusted)
		}
		id, err := verifyChain(roots, cs.PeerCertificates[0], cs.PeerCertificates[1:], time.Now())
		if err != nil {
			return err
		}
		return accept(id)
	}
	cert := b.Certificate()
	server = &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{cert},
		ClientAuth: tls.RequireAnyClientCert, VerifyConnection: check}
	client = &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{cert},
		// The chain is verified by check, against the CA, with the
		// identity instead of a host name.
		InsecureSkipVerify: true, VerifyConnection: check}
	return server, client
}
