package etcdstore_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/squallstream/squall/cluster/etcdembed"
)

// embedded starts a single-node etcd in a temporary directory for the
// test and returns its client endpoints; it stops when the test ends.
// (cluster/internal/etcdtest does the same for cluster/, whose internal
// packages this one cannot import.)
func embedded(t testing.TB) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := etcdembed.Start(ctx, etcdembed.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatalf("embedded etcd: %v", err)
	}
	t.Cleanup(s.Close)
	return s.Endpoints()
}

// clientConfig is the configuration of a test's clients of endpoints.
func clientConfig(endpoints []string) clientv3.Config {
	return clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()}
}

// client connects to endpoints; the client closes when the test ends.
func client(t testing.TB, endpoints []string) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientConfig(endpoints))
	if err != nil {
		t.Fatalf("etcd client: %v", err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

var prefixes atomic.Int64

// runPrefix separates the keys of this test process from those of earlier
// runs against the same cluster.
var runPrefix = fmt.Sprintf("/squall-test/etcdstore/%d-%d", os.Getpid(), time.Now().UnixNano())

// newPrefix returns a prefix no other location of this run uses; when
// cli is not nil, the keys under it are deleted when the test ends.
func newPrefix(t testing.TB, cli *clientv3.Client) string {
	p := fmt.Sprintf("%s/%d", runPrefix, prefixes.Add(1))
	if cli != nil {
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if _, err := cli.Delete(ctx, p+"/", clientv3.WithPrefix()); err != nil {
				t.Errorf("delete the test's keys under %s: %v", p, err)
			}
		})
	}
	return p
}
