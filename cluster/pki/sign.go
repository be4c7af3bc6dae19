package pki

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"fmt"
	"time"
)

// Signature is a detached signature with the signer's certificates (leaf
// first, then intermediates), so that anyone trusting the CA can check
// who signed.
type Signature struct {
	Chain [][]byte `json:"chain"` // DER certificates
	Sig   []byte   `json:"sig"`   // over the message (sha256 of it for ECDSA and RSA keys)
}

// Sign signs msg with the bundle's key.
func (b *Bundle) Sign(msg []byte) (Signature, error) {
	var sig []byte
	var err error
	if _, ok := b.Key.Public().(ed25519.PublicKey); ok {
		sig, err = b.Key.Sign(rand.Reader, msg, crypto.Hash(0))
	} else {
		sum := sha256.Sum256(msg)
		sig, err = b.Key.Sign(rand.Reader, sum[:], crypto.SHA256)
	}
	if err != nil {
		return Signature{}, fmt.Errorf("pki: signing: %w", err)
	}
	s := Signature{Sig: sig, Chain: [][]byte{b.Cert.Raw}}
	for _, c := range b.Intermediates {
		s.Chain = append(s.Chain, c.Raw)
	}
	return s, nil
}

// Verify checks that s is a signature of msg by a certificate chaining to
// roots at now whose role is one of want, and returns the signer.
func (s Signature) Verify(roots *x509.CertPool, msg []byte, now time.Time, want ...Role) (Identity, error) {
	if len(s.Chain) == 0 || len(s.Sig) == 0 {
		return Identity{}, fmt.Errorf("%w: not signed", ErrUntrusted)
	}
	certs := make([]*x509.Certificate, len(s.Chain))
	for i, der := range s.Chain {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return Identity{}, fmt.Errorf("%w: signer's certificate: %v", ErrUntrusted, err)
		}
		certs[i] = c
	}
	id, err := verifyChain(roots, certs[0], certs[1:], now)
	if err != nil {
		return Identity{}, err
	}
	if !hasRole(id, want) {
		return Identity{}, fmt.Errorf("%w: signed by %s, not by a %s", ErrUntrusted, id, roleList(want))
	}
	if err := certs[0].CheckSignature(signatureAlgorithm(certs[0]), msg, s.Sig); err != nil {
		return Identity{}, fmt.Errorf("%w: bad signature by %s: %v", ErrUntrusted, id, err)
	}
	return id, nil
}

// signatureAlgorithm is how Sign signs with a key of cert's kind.
func signatureAlgorithm(cert *x509.Certificate) x509.SignatureAlgorithm {
	switch cert.PublicKeyAlgorithm {
	case x509.RSA:
		return x509.SHA256WithRSA
	case x509.Ed25519:
		return x509.PureEd25519
	}
	return x509.ECDSAWithSHA256
}
