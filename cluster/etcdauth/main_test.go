package etcdauth

import (
	"context"
	"crypto/tls"
	"errors"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/squallstream/squall/cluster/etcdembed"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Passwords of the daemons in the password tests.
const (
	rootPW       = "root-secret"
	nimbusPW     = "nimbus-secret"
	supervisorPW = "supervisor-secret"
)

// startEtcd starts a single-node etcd for the test, with cheap password
// hashes, and returns its endpoints.
func startEtcd(t *testing.T, c etcdembed.Config) []string {
	t.Helper()
	c.Dir = t.TempDir()
	c.BcryptCost = 4
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := etcdembed.Start(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s.Endpoints()
}

// connect returns a client of endpoints as user (none if empty), over TLS
// if tc is set; it closes when the test ends.
func connect(t *testing.T, endpoints []string, user, password string, tc *tls.Config) *clientv3.Client {
	t.Helper()
	cli, err := dial(endpoints, user, password, tc)
	if err != nil {
		t.Fatalf("connect as %q: %v", user, err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

func dial(endpoints []string, user, password string, tc *tls.Config) (*clientv3.Client, error) {
	eps := endpoints
	if tc != nil {
		eps = nil
		for _, ep := range endpoints {
			eps = append(eps, "https://"+ep)
		}
	}
	return clientv3.New(clientv3.Config{Endpoints: eps, Username: user, Password: password, TLS: tc,
		DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
}

// secured starts an etcd, enables authentication with passwords and
// returns its endpoints and a root client.
func secured(t *testing.T) ([]string, *clientv3.Client) {
	t.Helper()
	eps := startEtcd(t, etcdembed.Config{})
	root := connect(t, eps, RootUser, rootPW, nil) // before Enable: etcd's client ignores "auth not enabled"
	if err := Enable(ctxT(t), root, Config{RootPassword: rootPW, NimbusPassword: nimbusPW, SupervisorPassword: supervisorPW}); err != nil {
		t.Fatal(err)
	}
	return eps, root
}

// ctxT is a context for one test's requests.
func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// wantDenied fails the test unless err is etcd's permission denied.
func wantDenied(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, rpctypes.ErrPermissionDenied) {
		t.Errorf("%s: %v, want permission denied", what, err)
	}
}

// wantOK fails the test if err is not nil.
func wantOK(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Errorf("%s: %v, want it allowed", what, err)
	}
}

// put, get and del are one request each, for the tables of the tests.
func put(cli *clientv3.Client, key string) func(context.Context) error {
	return func(ctx context.Context) error { _, err := cli.Put(ctx, key, "v"); return err }
}

func get(cli *clientv3.Client, key string, opts ...clientv3.OpOption) func(context.Context) error {
	return func(ctx context.Context) error { _, err := cli.Get(ctx, key, opts...); return err }
}

func del(cli *clientv3.Client, key string) func(context.Context) error {
	return func(ctx context.Context) error { _, err := cli.Delete(ctx, key); return err }
}
