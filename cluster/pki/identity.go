package pki

import (
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
)

// Role is what a certificate's holder is in the cluster.
type Role string

// The roles of a cluster.
const (
	Nimbus     Role = "nimbus"
	Supervisor Role = "supervisor"
	Worker     Role = "worker"
	Client     Role = "client"
	Admin      Role = "admin"
)

// Roles lists every role, for messages and flags.
var roles = []Role{Nimbus, Supervisor, Worker, Client, Admin}

// ParseRole reads a role's name.
func ParseRole(s string) (Role, error) {
	for _, r := range roles {
		if string(r) == s {
			return r, nil
		}
	}
	return "", fmt.Errorf("%w: unknown role %q (want nimbus, supervisor, worker, client or admin)", ErrInvalid, s)
}

// ErrInvalid is wrapped by errors of bad requests and bad files.
var ErrInvalid = errors.New("pki: invalid")

// ErrUntrusted is wrapped by every refusal of a certificate or signature.
var ErrUntrusted = errors.New("pki: untrusted")

// Identity is who holds a certificate.
type Identity struct {
	Role Role
	Name string
	// Issuer is the supervisor that issued a worker's certificate.
	Issuer string
}

func (id Identity) String() string {
	if id.Issuer != "" {
		return string(id.Role) + "/" + id.Name + " (issued by supervisor/" + id.Issuer + ")"
	}
	return string(id.Role) + "/" + id.Name
}

// WorkerName is the name of a worker's certificate: the topology and the
// epoch it runs in, so that workers of one topology and epoch recognize
// each other and no one else.
func WorkerName(topology string, epoch int64) string {
	return fmt.Sprintf("%s@%d", topology, epoch)
}

// roleOf reads a certificate's role and name.
func roleOf(c *x509.Certificate) (Identity, error) {
	if len(c.Subject.OrganizationalUnit) == 0 || c.Subject.CommonName == "" {
		return Identity{}, fmt.Errorf("%w: certificate %q names no role (OU) or no name (CN)", ErrUntrusted, c.Subject)
	}
	r, err := ParseRole(c.Subject.OrganizationalUnit[0])
	if err != nil {
		return Identity{}, fmt.Errorf("%w: certificate %q: %v", ErrUntrusted, c.Subject, err)
	}
	return Identity{Role: r, Name: c.Subject.CommonName}, nil
}

// IdentityOf returns the identity of a verified chain (leaf first, the CA
// last, as crypto/x509 and crypto/tls return them). Only two shapes are
// accepted: a leaf of any role but worker signed by the CA, and a worker
// signed by a supervisor signed by the CA.
func IdentityOf(chain []*x509.Certificate) (Identity, error) {
	if len(chain) == 0 {
		return Identity{}, fmt.Errorf("%w: no certificate", ErrUntrusted)
	}
	leaf, err := roleOf(chain[0])
	if err != nil {
		return Identity{}, err
	}
	switch len(chain) {
	case 2:
		if leaf.Role == Worker {
			return Identity{}, fmt.Errorf("%w: worker certificate %q not issued by a supervisor", ErrUntrusted, leaf.Name)
		}
		return leaf, nil
	case 3:
		issuer, err := roleOf(chain[1])
		if err != nil {
			return Identity{}, err
		}
		if issuer.Role != Supervisor || leaf.Role != Worker {
			return Identity{}, fmt.Errorf("%w: %s issued by %s: only supervisors issue certificates, only to workers", ErrUntrusted, leaf, issuer)
		}
		leaf.Issuer = issuer.Name
		return leaf, nil
	}
	return Identity{}, fmt.Errorf("%w: chain of %d certificates (want 2, or 3 for a worker)", ErrUntrusted, len(chain))
}

// IdentityOfChains returns the identity of the first verified chain that
// has one (tls.ConnectionState.VerifiedChains).
func IdentityOfChains(chains [][]*x509.Certificate) (Identity, error) {
	var errs []error
	for _, ch := range chains {
		id, err := IdentityOf(ch)
		if err == nil {
			return id, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return Identity{}, fmt.Errorf("%w: no verified certificate", ErrUntrusted)
	}
	return Identity{}, errors.Join(errs...)
}

// hasRole reports whether id's role is one of want (any when want is
// empty).
func hasRole(id Identity, want []Role) bool {
	if len(want) == 0 {
		return true
	}
	for _, r := range want {
		if id.Role == r {
			return true
		}
	}
	return false
}

func roleList(want []Role) string {
	s := make([]string, len(want))
	for i, r := range want {
		s[i] = string(r)
	}
	return strings.Join(s, " or ")
}
