package supervisor

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/squallstream/squall/cluster/internal/etcdtest"
	"github.com/squallstream/squall/cluster/meta"
)

// crashOnce exits 3 on its first start in a slot and then runs.
const crashOnce = "#!/bin/sh\nif [ ! -f crashed ]; then touch crashed; exit 3; fi\ntrap 'exit 0' TERM\nwhile :; do sleep 0.05; done\n"

// TestCrashReportSurvivesALostLease: a slot's crash report lives under the
// supervisor's lease; when the lease is lost (a stall longer than the
// TTL), the supervisor registers again and publishes the report again,
// although the worker has not crashed since.
func TestCrashReportSurvivesALostLease(t *testing.T) {
	e := newEnv(t)
	dg := e.artifact("t1", crashOnce)
	e.run("s1", t.TempDir(), nil)
	slot := meta.Slot{Supervisor: "s1", Port: 7000}
	key := e.keys.Crash("t1", slot)
	e.assign("t1", dg, slot)
	reported := func(kv map[string]string) bool {
		var c meta.Crash
		v, ok := kv[key]
		return ok && meta.Decode("", []byte(v), &c) == nil && c.Crashes == 1
	}
	etcdtest.WaitFor(t, e.cli, e.keys.Crashes(), 30*time.Second, "the crash reported", reported)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := e.cli.Get(ctx, key)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("the report: %v %v", resp, err)
	}
	lease := clientv3.LeaseID(resp.Kvs[0].Lease)
	if _, err := e.cli.Revoke(ctx, lease); err != nil { // the lease is lost
		t.Fatal(err)
	}
	etcdtest.WaitFor(t, e.cli, e.keys.Crashes(), 30*time.Second, "the report published again under a new lease", func(kv map[string]string) bool {
		if !reported(kv) {
			return false
		}
		r, err := e.cli.Get(ctx, key)
		return err == nil && len(r.Kvs) == 1 && clientv3.LeaseID(r.Kvs[0].Lease) != lease
	})
}
