package etcdauth

import (
	"context"
	"errors"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/squallstream/squall/cluster/meta"
)

// ErrInvalid is matched by the errors of a Config or a name the package
// refuses.
var ErrInvalid = errors.New("etcdauth: invalid")

// Config is what Enable sets up. The zero value is refused: it needs
// either passwords or ClientCerts.
type Config struct {
	// Prefix of the cluster's keys; "" means meta.DefaultPrefix
	// ("/squall").
	Prefix string
	// ClientCerts says the daemons and the administrator authenticate
	// with client certificates, their CommonName being their user name
	// (etcd started with client certificate authentication). Then a
	// password below may be empty: a user created without one can
	// authenticate only by certificate. Without ClientCerts every
	// password is required.
	ClientCerts bool
	// Passwords of root, squall-nimbus and squall-supervisor. A non-empty
	// one is set, whether the user is new or not (running Enable again
	// with another one changes it); an empty one leaves an existing
	// user's password as it is.
	RootPassword, NimbusPassword, SupervisorPassword string
}

// Validate reports a Config Enable refuses; its errors match ErrInvalid.
func (c Config) Validate() error {
	if c.ClientCerts {
		return nil
	}
	for _, p := range []struct{ user, password string }{
		{RootUser, c.RootPassword}, {NimbusUser, c.NimbusPassword}, {SupervisorUser, c.SupervisorPassword},
	} {
		if p.password == "" {
			return fmt.Errorf("%w: Config: no password for %s (without ClientCerts every user needs one)", ErrInvalid, p.user)
		}
	}
	return nil
}

// Enable creates the root user and role, the roles and users of the
// daemons (see the package comment), and enables etcd's authentication,
// through cli, which must act as root once authentication is on. It is
// idempotent: it adds what is missing, brings the daemons' roles to their
// permissions (revoking any other) and does nothing to what is right.
func Enable(ctx context.Context, cli *clientv3.Client, c Config) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if _, err := cli.RoleAdd(ctx, RootRole); err != nil && !isExists(err) {
		return fmt.Errorf("etcdauth: add role %s: %w", RootRole, err)
	}
	if err := ensureUser(ctx, cli, RootUser, c.RootPassword, RootRole); err != nil {
		return err
	}
	l := meta.New(c.Prefix)
	for _, d := range []struct {
		user, password string
		perms          []Permission
	}{
		{NimbusUser, c.NimbusPassword, NimbusPermissions(l.Prefix)},
		{SupervisorUser, c.SupervisorPassword, SupervisorPermissions(l.Prefix)},
	} {
		if err := ensureRole(ctx, cli, d.user, d.perms); err != nil {
			return err
		}
		if err := ensureUser(ctx, cli, d.user, d.password, d.user); err != nil {
			return err
		}
	}
	if _, err := cli.AuthEnable(ctx); err != nil {
		return fmt.Errorf("etcdauth: enable authentication: %w", err)
	}
	return nil
}
