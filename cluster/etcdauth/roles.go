package etcdauth

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// ensureRole makes role exist with exactly perms: it adds the role if
// missing, revokes the permissions not in perms and grants those missing
// or of another type. (etcd names a role's permission by its key and
// range end; granting one again replaces its type.)
func ensureRole(ctx context.Context, cli *clientv3.Client, role string, perms []Permission) error {
	if _, err := cli.RoleAdd(ctx, role); err != nil && !isExists(err) {
		return fmt.Errorf("etcdauth: add role %s: %w", role, err)
	}
	resp, err := cli.RoleGet(ctx, role)
	if err != nil {
		return fmt.Errorf("etcdauth: read role %s: %w", role, err)
	}
	type span struct{ key, end string }
	want := map[span]clientv3.PermissionType{}
	for _, p := range perms {
		want[span{p.Key, p.RangeEnd}] = p.Type
	}
	have := map[span]clientv3.PermissionType{}
	for _, p := range resp.Perm {
		s := span{string(p.Key), string(p.RangeEnd)}
		have[s] = clientv3.PermissionType(p.PermType)
		if _, ok := want[s]; !ok {
			if _, err := cli.RoleRevokePermission(ctx, role, s.key, s.end); err != nil {
				return fmt.Errorf("etcdauth: revoke %s from role %s: %w", Permission{s.key, s.end, have[s]}, role, err)
			}
		}
	}
	for _, p := range perms {
		if t, ok := have[span{p.Key, p.RangeEnd}]; ok && t == p.Type {
			continue
		}
		if _, err := cli.RoleGrantPermission(ctx, role, p.Key, p.RangeEnd, p.Type); err != nil {
			return fmt.Errorf("etcdauth: grant %s to role %s: %w", p, role, err)
		}
	}
	return nil
}

// ensureUser makes user exist with role; a non-empty password is set, an
// empty one creates a user without password (certificate only) or leaves
// an existing user's as it is.
func ensureUser(ctx context.Context, cli *clientv3.Client, user, password, role string) error {
	var err error
	if password == "" {
		_, err = cli.UserAddWithOptions(ctx, user, "", &clientv3.UserAddOptions{NoPassword: true})
	} else {
		_, err = cli.UserAdd(ctx, user, password)
		if isExists(err) {
			_, err = cli.UserChangePassword(ctx, user, password)
		}
	}
	if err != nil && !isExists(err) {
		return fmt.Errorf("etcdauth: user %s: %w", user, err)
	}
	if _, err := cli.UserGrantRole(ctx, user, role); err != nil {
		return fmt.Errorf("etcdauth: grant role %s to user %s: %w", role, user, err)
	}
	return nil
}

// isExists reports etcd's "already exists" for a user or a role.
func isExists(err error) bool {
	return errors.Is(err, rpctypes.ErrUserAlreadyExist) || errors.Is(err, rpctypes.ErrRoleAlreadyExist)
}

// isNotFound reports etcd's "not found" for a user or a role.
func isNotFound(err error) bool {
	return errors.Is(err, rpctypes.ErrUserNotFound) || errors.Is(err, rpctypes.ErrRoleNotFound)
}
