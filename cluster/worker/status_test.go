package worker

import (
	"context"
	"testing"
	"time"

	"github.com/squallstream/squall/cluster/internal/etcdtest"
)

// TestPutUnmovedNeverGoesBack: a status put guarded by the revision the
// worker last saw writes over its own last put, and a put that etcd
// applies late (issued before a newer one, as a request of unknown
// outcome can be) changes nothing; when the key moved for another reason
// (its lease expired), the put reports the new revision, and a put at it
// writes.
func TestPutUnmovedNeverGoesBack(t *testing.T) {
	cli := etcdtest.Client(t, etcdtest.Embedded(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lease, err := cli.Grant(ctx, 60)
	if err != nil {
		t.Fatal(err)
	}
	const key = "/s/status/t"
	value := func() string {
		resp, err := cli.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Kvs) == 0 {
			return ""
		}
		return string(resp.Kvs[0].Value)
	}
	put := func(v string, rev int64) (int64, bool) {
		t.Helper()
		got, ok, err := putUnmoved(ctx, cli, key, v, lease.ID, rev)
		if err != nil {
			t.Fatal(err)
		}
		return got, ok
	}

	r1, ok := put("committed 1", 0)
	if !ok || value() != "committed 1" {
		t.Fatalf("the first put: wrote %v, value %q", ok, value())
	}
	r2, ok := put("committed 2", r1)
	if !ok || r2 <= r1 || value() != "committed 2" {
		t.Fatalf("a put at the last revision: wrote %v, revision %d after %d, value %q", ok, r2, r1, value())
	}
	// The put of "committed 1", issued when the key stood at revision r1 or
	// did not exist, lands only now.
	for _, stale := range []int64{0, r1} {
		if got, ok := put("committed 1", stale); ok || got != r2 || value() != "committed 2" {
			t.Fatalf("a late put issued at revision %d: wrote %v, revision %d, value %q", stale, ok, got, value())
		}
	}
	// The lease expires: the key is gone; the worker learns it and writes.
	if _, err := cli.Revoke(ctx, lease.ID); err != nil {
		t.Fatal(err)
	}
	if lease, err = cli.Grant(ctx, 60); err != nil {
		t.Fatal(err)
	}
	got, ok := put("committed 3", r2)
	if ok || got != 0 {
		t.Fatalf("a put after the key vanished: wrote %v, revision %d", ok, got)
	}
	if _, ok := put("committed 3", got); !ok || value() != "committed 3" {
		t.Fatalf("a put at the key's new revision: wrote %v, value %q", ok, value())
	}
}
