package meta

import (
	"crypto/x509"
	"fmt"
	"time"

	"github.com/squallstream/squall/cluster/pki"
)

// SigningBytes is what a nimbus signs of an assignment: its encoding
// without the signature, under a fixed header, so that a signature of an
// assignment is never taken for a signature of anything else.
func (a Assignment) SigningBytes() []byte {
	a.Signature = nil
	return []byte("squall assignment v1\n" + Encode(a))
}

// Unsigned is the assignment without its signature.
func (a Assignment) Unsigned() Assignment {
	a.Signature = nil
	return a
}

// Sign signs the assignment with a nimbus's bundle.
func (a *Assignment) Sign(b *pki.Bundle) error {
	s, err := b.Sign(a.SigningBytes()) // SigningBytes leaves the signature out
	if err != nil {
		return err
	}
	a.Signature = &s
	return nil
}

// Verify checks that a nimbus of the cluster (roots) signed the
// assignment as it is, and returns the signer.
func (a Assignment) Verify(roots *x509.CertPool, now time.Time) (pki.Identity, error) {
	if a.Signature == nil {
		return pki.Identity{}, fmt.Errorf("meta: assignment of %s (epoch %d) is not signed: %w", a.Topology, a.Epoch, pki.ErrUntrusted)
	}
	id, err := a.Signature.Verify(roots, a.SigningBytes(), now, pki.Nimbus)
	if err != nil {
		return id, fmt.Errorf("meta: assignment of %s (epoch %d): %w", a.Topology, a.Epoch, err)
	}
	return id, nil
}
