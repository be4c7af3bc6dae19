package testpki

import (
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
)

// ServerConfig is the mutual-TLS configuration of a server presenting
// cert: TLS 1.3 at least, and every client must present a certificate
// the CA signed.
func (ca *CA) ServerConfig(cert tls.Certificate) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequireAndVerifyClientCert,
		ClientCAs: ca.Pool(), MinVersion: tls.VersionTLS13}
}

// ClientConfig is the configuration of a client presenting cert (no
// certificate if nil): TLS 1.3 at least, trusting servers whose
// certificates the CA signed.
func (ca *CA) ClientConfig(cert *tls.Certificate) *tls.Config {
	c := &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS13}
	if cert != nil {
		c.Certificates = []tls.Certificate{*cert}
	}
	return c
}

// CommonNamePrefix is a check of a verified TLS connection's peer (a
// tls.Config's VerifyConnection, or a transport's VerifyPeer) that
// accepts only a peer whose certificate's common name starts with
// prefix: how a cluster tells a worker of its topology from another
// certificate of the same CA.
func CommonNamePrefix(prefix string) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("testpki: no peer certificate")
		}
		if cn := cs.PeerCertificates[0].Subject.CommonName; !strings.HasPrefix(cn, prefix) {
			return fmt.Errorf("testpki: certificate of %q, not under %q", cn, prefix)
		}
		return nil
	}
}
