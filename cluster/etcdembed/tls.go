package etcdembed

import (
	"errors"

	"go.etcd.io/etcd/client/pkg/v3/transport"
)

// tlsSide is the TLS of one side of a member: its clients or its peers.
type tlsSide struct {
	what                 string // "client" or "peer", for errors
	cert, key, ca        string
	certAuth             bool
	certName, keyName    string // the Config fields, for errors
	caName, certAuthName string
}

func (c Config) clientTLS() tlsSide {
	return tlsSide{what: "client", cert: c.CertFile, key: c.KeyFile, ca: c.TrustedCAFile, certAuth: c.ClientCertAuth,
		certName: "CertFile", keyName: "KeyFile", caName: "TrustedCAFile", certAuthName: "ClientCertAuth"}
}

func (c Config) peerTLS() tlsSide {
	return tlsSide{what: "peer", cert: c.PeerCertFile, key: c.PeerKeyFile, ca: c.PeerTrustedCAFile, certAuth: c.PeerClientCertAuth,
		certName: "PeerCertFile", keyName: "PeerKeyFile", caName: "PeerTrustedCAFile", certAuthName: "PeerClientCertAuth"}
}

// enabled reports whether the side serves TLS.
func (t tlsSide) enabled() bool { return t.cert != "" }

func (t tlsSide) validate() error {
	switch {
	case (t.cert == "") != (t.key == ""):
		return errors.New("etcdembed: Config." + t.certName + " and Config." + t.keyName + " go together")
	case t.ca != "" && t.cert == "":
		return errors.New("etcdembed: Config." + t.caName + " needs Config." + t.certName + " (" + t.what + " TLS)")
	case t.certAuth && t.ca == "":
		return errors.New("etcdembed: Config." + t.certAuthName + " needs Config." + t.caName +
			" (the CA of the " + t.what + " certificates to accept)")
	}
	return nil
}

// info is the side's TLS in etcd's terms; the zero TLSInfo (plain HTTP)
// for a side without a certificate.
func (t tlsSide) info() transport.TLSInfo {
	if !t.enabled() {
		return transport.TLSInfo{}
	}
	return transport.TLSInfo{CertFile: t.cert, KeyFile: t.key, TrustedCAFile: t.ca, ClientCertAuth: t.certAuth}
}

func (c Config) validateTLS() error {
	if err := c.clientTLS().validate(); err != nil {
		return err
	}
	return c.peerTLS().validate()
}
