package etcdauth

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/squallstream/squall/cluster/meta"
)

// Credential is an etcd user name and password: what a topology's
// workers connect with.
type Credential struct {
	User, Password string
}

// String names the user and hides the password.
func (c Credential) String() string { return c.User + ":<password hidden>" }

// LogValue logs the user, never the password.
func (c Credential) LogValue() slog.Value { return slog.StringValue(c.String()) }

// GrantTopology gives topology of the cluster under prefix ("" is
// meta.DefaultPrefix) its role (TopologyPermissions, converged as Enable
// converges the daemons' roles) and a user of the same name holding it,
// with a new random password (128 bits from crypto/rand): the returned
// Credential. Granting again changes the password: the workers holding
// the old one are refused once etcd asks them to authenticate again. cli
// must act as root.
func GrantTopology(ctx context.Context, cli *clientv3.Client, prefix, topology string) (Credential, error) {
	if err := meta.CheckName("topology", topology); err != nil {
		return Credential{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	name := TopologyRole(topology)
	if err := ensureRole(ctx, cli, name, TopologyPermissions(prefix, topology)); err != nil {
		return Credential{}, err
	}
	c := Credential{User: name, Password: rand.Text()}
	if err := ensureUser(ctx, cli, c.User, c.Password, name); err != nil {
		return Credential{}, err
	}
	return c, nil
}

// RevokeTopology removes topology's user and role: its credentials stop
// working at once. Revoking a topology that has none is not an error.
// cli must act as root.
func RevokeTopology(ctx context.Context, cli *clientv3.Client, topology string) error {
	if err := meta.CheckName("topology", topology); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	name := TopologyRole(topology)
	if _, err := cli.UserDelete(ctx, name); err != nil && !isNotFound(err) {
		return fmt.Errorf("etcdauth: delete user %s: %w", name, err)
	}
	if _, err := cli.RoleDelete(ctx, name); err != nil && !isNotFound(err) {
		return fmt.Errorf("etcdauth: delete role %s: %w", name, err)
	}
	return nil
}
