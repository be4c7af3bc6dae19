package e2e

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/squallstream/squall/cluster/clustertest"
	"github.com/squallstream/squall/cluster/etcdauth"
	"github.com/squallstream/squall/cluster/etcdembed"
	"github.com/squallstream/squall/cluster/meta"
)

// TestSecurityWorkerEtcdCredentials: on an etcd with authentication, set
// up as docs/cluster.md tells (etcd-auth, a nimbus as root with
// --worker-credentials, a supervisor as squall-supervisor), the workers
// of a topology run with an etcd user of their own: their environment
// holds neither the supervisor's password nor its user, and their
// credential is refused on another topology's keys and on the
// assignments, and stops working when the topology is killed.
func TestSecurityWorkerEtcdCredentials(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// The lowest bcrypt cost: under the race detector every login
	// would otherwise take seconds.
	etcd, err := etcdembed.Start(ctx, etcdembed.Config{Dir: t.TempDir(), BcryptCost: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { etcd.Close() })
	eps := etcd.Endpoints()
	tryDial := func(user, password string) (*clientv3.Client, error) {
		cli, err := clientv3.New(clientv3.Config{Endpoints: eps, Username: user, Password: password, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
		if err == nil {
			t.Cleanup(func() { cli.Close() })
		}
		return cli, err
	}
	dial := func(user, password string) *clientv3.Client {
		cli, err := tryDial(user, password)
		if err != nil {
			t.Fatal(err)
		}
		return cli
	}
	dir := t.TempDir()
	for name, pw := range map[string]string{"root": "root-secret", "nimbus": "nimbus-secret", "supervisor": "supervisor-secret"} {
		if err := os.WriteFile(dir+"/"+name, []byte(pw+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	keys := meta.New("/" + strings.ReplaceAll(strings.ToLower(t.Name()), "/", "_"))
	pc := clustertest.New(t, testprog, nil, eps, keys, nil, "SQUALL_LOG_LEVEL=debug",
		"SQUALL_NIMBUS_ETCD_USER=root", "SQUALL_NIMBUS_ETCD_PASSWORD=root-secret", "SQUALL_NIMBUS_WORKER_CREDENTIALS=true",
		"SQUALL_SUPERVISOR_ETCD_USER="+etcdauth.SupervisorUser, "SQUALL_SUPERVISOR_ETCD_PASSWORD=supervisor-secret")
	if out, err := pc.Run("etcd-auth", "--prefix", keys.Prefix, "--root-password-file", dir+"/root",
		"--nimbus-password-file", dir+"/nimbus", "--supervisor-password-file", dir+"/supervisor"); err != nil {
		t.Fatalf("etcd-auth: %v\n%s", err, out)
	}
	root := dial("root", "root-secret")
	pc.Cli = root
	c := &cluster{Cluster: pc, t: t, keys: keys, cli: root, ttl: 2 * time.Second}
	c.nimbus("n1")
	c.supervisor("s1", t.TempDir(), 7800)
	addr := c.leader(60*time.Second, "")
	if out, err := c.Run("submit", "wordcount", "--nimbus", addr, "--timeout", "60s"); err != nil {
		t.Fatalf("submit: %v\n%s", err, out)
	}
	st := c.committing("wordcount", 90*time.Second, 0, "commits by workers on their own etcd user", anyStatus)

	environ, err := os.ReadFile("/proc/" + strconv.Itoa(st.PID) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	env := strings.Split(string(environ), "\x00")
	if !slices.Contains(env, "SQUALL_ETCD_USER="+etcdauth.TopologyRole("wordcount")) {
		t.Errorf("the worker's etcd user is not its topology's: %q", env)
	}
	if strings.Contains(string(environ), "supervisor-secret") || strings.Contains(string(environ), "root-secret") {
		t.Errorf("the worker's environment holds a daemon's password")
	}

	resp, err := root.Get(ctx, keys.Credentials("wordcount"))
	if err != nil || len(resp.Kvs) == 0 {
		t.Fatalf("no credential of wordcount: %v", err)
	}
	var cred meta.WorkerCredential
	if err := meta.Decode("", resp.Kvs[0].Value, &cred); err != nil {
		t.Fatal(err)
	}
	worker := dial(cred.User, cred.Password)
	if _, err := worker.Get(ctx, keys.Assignment("wordcount")); err != nil {
		t.Fatalf("the workers' credential cannot read their assignment: %v", err)
	}
	for _, key := range []string{keys.Assignment("wordcount"), keys.Assignment("other"), keys.Status("other"),
		keys.Generation("other"), keys.Spec("wordcount"), keys.Supervisor("s1")} {
		if _, err := worker.Put(ctx, key, "forged"); err == nil {
			t.Errorf("the workers' credential wrote %s", key)
		}
	}
	if _, err := worker.Get(ctx, keys.Credentials("wordcount")); err == nil {
		t.Error("the workers' credential reads the credentials")
	}
	if out, err := c.Run("kill", "wordcount", "--nimbus", addr); err != nil {
		t.Fatalf("kill: %v\n%s", err, out)
	}
	if cli, err := tryDial(cred.User, cred.Password); err == nil {
		if _, err := cli.Get(ctx, keys.Status("wordcount")); err == nil {
			t.Error("the credential of a killed topology still works")
		}
	}
}
