package etcdauth

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/squallstream/squall/cluster/meta"
)

func TestEnableRefusesUnauthenticatedClients(t *testing.T) {
	eps, root := secured(t)
	ctx := ctxT(t)
	anon := connect(t, eps, "", "", nil)
	k := meta.New("").Assignment("wc")
	for _, op := range []struct {
		what string
		err  error
	}{
		{"anonymous Put", put(anon, k)(ctx)},
		{"anonymous Get", get(anon, k)(ctx)},
		{"anonymous Put outside the prefix", put(anon, "/elsewhere")(ctx)},
	} {
		if !errors.Is(op.err, rpctypes.ErrUserEmpty) && !errors.Is(op.err, rpctypes.ErrPermissionDenied) {
			t.Errorf("%s: %v, want refused (user name is empty)", op.what, op.err)
		}
	}
	if _, err := dial(eps, NimbusUser, "wrong", nil); !errors.Is(err, rpctypes.ErrAuthFailed) {
		t.Errorf("nimbus with a wrong password: %v, want authentication failed", err)
	}
	if _, err := dial(eps, "nobody", "x", nil); !errors.Is(err, rpctypes.ErrAuthFailed) {
		t.Errorf("an unknown user: %v, want authentication failed", err)
	}
	st, err := root.AuthStatus(ctx)
	if err != nil || !st.Enabled {
		t.Fatalf("AuthStatus = %v, %v; want enabled", st, err)
	}
}

func TestEnableIsIdempotentAndConvergesTheRoles(t *testing.T) {
	_, root := secured(t)
	ctx := ctxT(t)
	cfg := Config{RootPassword: rootPW, NimbusPassword: nimbusPW, SupervisorPassword: supervisorPW}
	l := meta.New("")
	// Drift: the supervisor role gains a permission on assignments, the
	// nimbus role loses its write.
	if _, err := root.RoleGrantPermission(ctx, SupervisorRole, l.Assignments(), clientv3.GetPrefixRangeEnd(l.Assignments()), ReadWrite); err != nil {
		t.Fatal(err)
	}
	if _, err := root.RoleGrantPermission(ctx, NimbusRole, l.Prefix+"/", clientv3.GetPrefixRangeEnd(l.Prefix+"/"), Read); err != nil {
		t.Fatal(err)
	}
	if err := Enable(ctx, root, cfg); err != nil {
		t.Fatalf("Enable again: %v", err)
	}
	if err := Enable(ctx, root, cfg); err != nil {
		t.Fatalf("Enable a third time: %v", err)
	}
	for role, want := range map[string][]Permission{NimbusRole: NimbusPermissions(""), SupervisorRole: SupervisorPermissions("")} {
		if got := rolePerms(t, root, role); !slices.Equal(got, sortedStrings(want)) {
			t.Errorf("role %s after Enable: %v, want %v", role, got, sortedStrings(want))
		}
	}
	for _, u := range []struct{ user, role string }{{RootUser, RootRole}, {NimbusUser, NimbusRole}, {SupervisorUser, SupervisorRole}} {
		resp, err := root.UserGet(ctx, u.user)
		if err != nil || !slices.Equal(resp.Roles, []string{u.role}) {
			t.Errorf("user %s: roles %v, %v; want [%s]", u.user, resp, err, u.role)
		}
	}
}

func TestEnableSetsTheGivenPasswords(t *testing.T) {
	eps, root := secured(t)
	ctx := ctxT(t)
	if err := Enable(ctx, root, Config{RootPassword: rootPW, NimbusPassword: "new-nimbus", SupervisorPassword: supervisorPW}); err != nil {
		t.Fatal(err)
	}
	if _, err := dial(eps, NimbusUser, nimbusPW, nil); !errors.Is(err, rpctypes.ErrAuthFailed) {
		t.Errorf("the nimbus's old password: %v, want authentication failed", err)
	}
	connect(t, eps, NimbusUser, "new-nimbus", nil)
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []Config{
		{},
		{RootPassword: "r", NimbusPassword: "n"},
		{RootPassword: "r", SupervisorPassword: "s"},
		{NimbusPassword: "n", SupervisorPassword: "s"},
	} {
		if err := c.Validate(); !errors.Is(err, ErrInvalid) {
			t.Errorf("Validate(%+v) = %v, want ErrInvalid", c, err)
		}
	}
	for _, c := range []Config{
		{RootPassword: "r", NimbusPassword: "n", SupervisorPassword: "s"},
		{ClientCerts: true},
		{ClientCerts: true, RootPassword: "r", Prefix: "/other"},
	} {
		if err := c.Validate(); err != nil {
			t.Errorf("Validate(%+v) = %v", c, err)
		}
	}
}

func TestPermissionsShowAsEtcdctlDoes(t *testing.T) {
	var got []string
	for _, p := range TopologyPermissions("/squall/", "wc") {
		got = append(got, p.String())
	}
	want := []string{
		"read /squall/assignments/wc",
		"readwrite /squall/workers/wc/[prefix]",
		"readwrite /squall/status/wc",
		"readwrite /squall/generations/wc",
		"readwrite /squall/errors/wc/[prefix]",
		"readwrite /squall/coordination/wc/[prefix]",
	}
	if !slices.Equal(got, want) {
		t.Errorf("TopologyPermissions(/squall/, wc) =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if d := CoordinationDir("", "w%c/é"); d != "/squall/coordination/w%25c%2f%c3%a9/" {
		t.Errorf("CoordinationDir = %s", d)
	}
}

// rolePerms lists role's permissions as sorted strings.
func rolePerms(t *testing.T, cli *clientv3.Client, role string) []string {
	t.Helper()
	resp, err := cli.RoleGet(ctxT(t), role)
	if err != nil {
		t.Fatalf("RoleGet %s: %v", role, err)
	}
	var ps []Permission
	for _, p := range resp.Perm {
		ps = append(ps, Permission{Key: string(p.Key), RangeEnd: string(p.RangeEnd), Type: clientv3.PermissionType(p.PermType)})
	}
	return sortedStrings(ps)
}

func sortedStrings(ps []Permission) []string {
	var s []string
	for _, p := range ps {
		s = append(s, p.String())
	}
	slices.Sort(s)
	return s
}
