// Package etcdtest gives cluster tests an etcd: an in-process single-node
// member (fast unit tests), or the real three-member cluster of
// scripts/services.sh (integration tests, through internal/testenv).
package etcdtest

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/squallstream/squall/cluster/etcdembed"
)

// Embedded starts a single-node etcd in a temporary directory for the test
// and returns its client endpoints; the member stops when the test ends.
func Embedded(t testing.TB) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := etcdembed.Start(ctx, etcdembed.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatalf("etcdtest: %v", err)
	}
	t.Cleanup(s.Close)
	return s.Endpoints()
}

// Client connects to endpoints; the client closes when the test ends.
func Client(t testing.TB, endpoints []string) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatalf("etcdtest: client: %v", err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// WaitFor watches the keys under prefix until cond holds on their current
// values (key → value), or fails the test after timeout. It re-reads the
// prefix on every change, so it never misses a state that lasts.
func WaitFor(t testing.TB, cli *clientv3.Client, prefix string, timeout time.Duration, what string, cond func(map[string]string) bool) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	last := map[string]string{}
	for {
		resp, err := cli.Get(ctx, prefix, clientv3.WithPrefix())
		if err != nil {
			t.Fatalf("etcdtest: waiting for %s: %v (last seen %v)", what, err, last)
		}
		last = map[string]string{}
		for _, kv := range resp.Kvs {
			last[string(kv.Key)] = string(kv.Value)
		}
		if cond(last) {
			return last
		}
		wctx, wcancel := context.WithCancel(ctx)
		wc := cli.Watch(clientv3.WithRequireLeader(wctx), prefix, clientv3.WithPrefix(), clientv3.WithRev(resp.Header.Revision+1))
		select {
		case <-wc:
		case <-ctx.Done():
		}
		wcancel()
		if ctx.Err() != nil {
			t.Fatalf("etcdtest: %s did not happen within %v; last seen under %s: %v", what, timeout, prefix, last)
		}
	}
}
