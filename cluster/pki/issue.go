package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"time"
)

// Default validities.
const (
	DefaultCAValidity     = 10 * 365 * 24 * time.Hour
	DefaultValidity       = 365 * 24 * time.Hour
	DefaultWorkerValidity = 30 * 24 * time.Hour
	// clockSkew backdates every certificate, so that a host whose clock is
	// a little behind accepts it at once.
	clockSkew = 5 * time.Minute
)

// Authority is the cluster CA: its certificate and private key.
type Authority struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// NewAuthority creates a cluster CA named name (validity 0:
// DefaultCAValidity).
func NewAuthority(name string, validity time.Duration, now time.Time) (*Authority, error) {
	if name == "" {
		return nil, fmt.Errorf("%w: the CA needs a name", ErrInvalid)
	}
	if validity <= 0 {
		validity = DefaultCAValidity
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: name, OrganizationalUnit: []string{"squall-ca"}},
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &Authority{Cert: cert, Key: key}, nil
}

// Request asks for a certificate.
type Request struct {
	Role Role
	Name string
	// Hosts are the DNS names and IP addresses the holder serves at (its
	// certificate's subject alternative names). Clients need none.
	Hosts []string
	// Validity: zero means DefaultValidity (DefaultWorkerValidity for
	// workers).
	Validity time.Duration
	Now      time.Time
}

// Issue makes a certificate for any role but worker (workers get theirs
// from their supervisor, Bundle.IssueWorker). A supervisor's certificate
// is an intermediate CA of path length 0 for that purpose.
func (a *Authority) Issue(req Request) (*Bundle, error) {
	if req.Role == Worker {
		return nil, fmt.Errorf("%w: workers' certificates are issued by their supervisor", ErrInvalid)
	}
	if _, err := ParseRole(string(req.Role)); err != nil {
		return nil, err
	}
	leaf, key, err := issue(a.Cert, a.Key, req)
	if err != nil {
		return nil, err
	}
	return &Bundle{Cert: leaf, Key: key, CA: a.Cert}, nil
}

// IssueWorker makes a worker's certificate, signed by this supervisor's
// bundle; name is WorkerName(topology, epoch).
func (b *Bundle) IssueWorker(name string, hosts []string, validity time.Duration, now time.Time) (*Bundle, error) {
	id, err := roleOf(b.Cert)
	if err != nil || id.Role != Supervisor || !b.Cert.IsCA {
		return nil, fmt.Errorf("%w: only a supervisor's certificate issues workers' certificates", ErrInvalid)
	}
	if validity <= 0 {
		validity = DefaultWorkerValidity
	}
	leaf, key, err := issue(b.Cert, b.Key, Request{Role: Worker, Name: name, Hosts: hosts, Validity: validity, Now: now})
	if err != nil {
		return nil, err
	}
	return &Bundle{Cert: leaf, Intermediates: []*x509.Certificate{b.Cert}, Key: key, CA: b.CA}, nil
}

func issue(parent *x509.Certificate, parentKey crypto.Signer, req Request) (*x509.Certificate, crypto.Signer, error) {
	if req.Name == "" {
		return nil, nil, fmt.Errorf("%w: a %s certificate needs a name", ErrInvalid, req.Role)
	}
	if req.Validity <= 0 {
		req.Validity = DefaultValidity
	}
	if req.Now.IsZero() {
		req.Now = time.Now()
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: req.Name, OrganizationalUnit: []string{string(req.Role)}},
		NotBefore:    req.Now.Add(-clockSkew),
		NotAfter:     req.Now.Add(req.Validity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	if tmpl.NotAfter.After(parent.NotAfter) {
		tmpl.NotAfter = parent.NotAfter
	}
	if req.Role == Supervisor {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.MaxPathLen, tmpl.MaxPathLenZero = 0, true
		tmpl.KeyUsage |= x509.KeyUsageCertSign
	}
	for _, h := range req.Hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), parentKey)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	return cert, key, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return n
}
