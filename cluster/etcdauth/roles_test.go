package etcdauth

import (
	"context"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/squallstream/squall/cluster/meta"
)

// Two topologies whose names are prefixes of each other, so that a
// permission granted on a prefix where a key was meant shows.
const (
	mine   = "wc"
	theirs = "wc2"
)

var (
	layout = meta.New("")
	slot   = meta.Slot{Supervisor: "s1", Port: 6700}
)

// everyKey is one key of each kind of the layout, for topology t.
func everyKey(t string) map[string]string {
	return map[string]string{
		"leader":       layout.Leader() + "/1",
		"code record":  layout.CodeRecord(t),
		"holder":       layout.Holders(t, "abc") + "n1",
		"spec":         layout.Spec(t),
		"assignment":   layout.Assignment(t),
		"supervisor":   layout.Supervisor(slot.Supervisor),
		"worker":       layout.Worker(t, slot),
		"status":       layout.Status(t),
		"generation":   layout.Generation(t),
		"crash":        layout.Crash(t, slot),
		"errors":       layout.ErrorReport(t, slot),
		"coordination": CoordinationDir("", t) + "gen",
	}
}

func TestNimbusRoleWritesEverythingOfTheCluster(t *testing.T) {
	eps, _ := secured(t)
	ctx := ctxT(t)
	nimbus := connect(t, eps, NimbusUser, nimbusPW, nil)
	for _, topo := range []string{mine, theirs} {
		for kind, key := range everyKey(topo) {
			wantOK(t, "nimbus Put "+kind+" "+key, put(nimbus, key)(ctx))
			wantOK(t, "nimbus Get "+kind+" "+key, get(nimbus, key)(ctx))
			wantOK(t, "nimbus Delete "+kind+" "+key, del(nimbus, key)(ctx))
		}
	}
	wantOK(t, "nimbus Get of the whole prefix", get(nimbus, layout.Prefix+"/", clientv3.WithPrefix())(ctx))
	wantDenied(t, "nimbus Put outside the prefix", put(nimbus, "/elsewhere")(ctx))
	_, err := nimbus.UserAdd(ctx, "intruder", "x")
	wantDenied(t, "nimbus UserAdd", err)
}

func TestSupervisorRoleCannotWriteAssignments(t *testing.T) {
	eps, _ := secured(t)
	ctx := ctxT(t)
	sup := connect(t, eps, SupervisorUser, supervisorPW, nil)
	nimbus := connect(t, eps, NimbusUser, nimbusPW, nil)
	keys := everyKey(mine)
	for _, key := range keys {
		wantOK(t, "nimbus Put "+key, put(nimbus, key)(ctx))
	}
	for kind, key := range keys {
		wantOK(t, "supervisor Get "+kind, get(sup, key)(ctx))
		switch kind {
		case "supervisor", "crash":
			wantOK(t, "supervisor Put "+kind, put(sup, key)(ctx))
			wantOK(t, "supervisor Delete "+kind, del(sup, key)(ctx))
		default:
			wantDenied(t, "supervisor Put "+kind+" "+key, put(sup, key)(ctx))
			wantDenied(t, "supervisor Delete "+kind+" "+key, del(sup, key)(ctx))
		}
	}
	wantOK(t, "supervisor Get of the whole prefix (watching assignments, holders, workers)",
		get(sup, layout.Prefix+"/", clientv3.WithPrefix())(ctx))
	wantDenied(t, "supervisor Put outside the prefix", put(sup, "/elsewhere")(ctx))
	// A registration and a crash report under the supervisor's lease,
	// then the lease revoked (etcd checks the right to delete every key
	// attached to it).
	lease, err := sup.Grant(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{keys["supervisor"], keys["crash"]} {
		if _, err := sup.Put(ctx, key, "v", clientv3.WithLease(lease.ID)); err != nil {
			t.Errorf("supervisor Put %s under its lease: %v", key, err)
		}
	}
	if _, err := sup.Revoke(ctx, lease.ID); err != nil {
		t.Errorf("supervisor revokes its lease: %v", err)
	}
}

func TestTopologyCredentialWritesOnlyItsOwnKeys(t *testing.T) {
	eps, root := secured(t)
	ctx := ctxT(t)
	nimbus := connect(t, eps, NimbusUser, nimbusPW, nil)
	cred, err := GrantTopology(ctx, root, "", mine)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := GrantTopology(ctx, root, "", theirs); err != nil {
		t.Fatal(err)
	}
	if cred.User != "squall-topology-wc" || len(cred.Password) < 20 {
		t.Fatalf("credential %v (password of %d characters)", cred, len(cred.Password))
	}
	if s := cred.String(); strings.Contains(s, cred.Password) {
		t.Errorf("Credential.String() shows the password: %s", s)
	}
	for _, topo := range []string{mine, theirs} {
		for _, key := range everyKey(topo) {
			wantOK(t, "nimbus Put "+key, put(nimbus, key)(ctx))
		}
	}
	w := connect(t, eps, cred.User, cred.Password, nil)

	// What a worker does (package cluster/worker).
	own := everyKey(mine)
	wantOK(t, "worker Get its assignment", get(w, own["assignment"])(ctx))
	wantOK(t, "worker Get its generation", get(w, own["generation"])(ctx))
	wantOK(t, "worker Get a peer's registration", get(w, layout.Worker(mine, meta.Slot{Supervisor: "s2", Port: 6701}))(ctx))
	resp, err := w.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(own["generation"]), ">", 0)).
		Then(clientv3.OpPut(own["generation"], "g")).Commit()
	if err != nil || !resp.Succeeded {
		t.Errorf("worker's generation transaction: %v, %v", resp, err)
	}
	lease, err := w.Grant(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"worker", "status", "errors"} {
		if _, err := w.Put(ctx, own[kind], "v", clientv3.WithLease(lease.ID)); err != nil {
			t.Errorf("worker Put its %s under its lease: %v", kind, err)
		}
	}
	if _, err := w.KeepAliveOnce(ctx, lease.ID); err != nil {
		t.Errorf("worker renews its lease: %v", err)
	}
	if _, err := w.Revoke(ctx, lease.ID); err != nil {
		t.Errorf("worker revokes its lease: %v", err)
	}
	assertWatch(t, w, nimbus, own["assignment"], true)

	// Its own assignment: read only.
	wantDenied(t, "worker Put its own assignment", put(w, own["assignment"])(ctx))
	wantDenied(t, "worker Delete its own assignment", del(w, own["assignment"])(ctx))
	// Everything of the other topology.
	for kind, key := range everyKey(theirs) {
		wantDenied(t, "worker Put the other topology's "+kind+" "+key, put(w, key)(ctx))
		wantDenied(t, "worker Get the other topology's "+kind+" "+key, get(w, key)(ctx))
	}
	assertWatch(t, w, nimbus, everyKey(theirs)["assignment"], false)
	// What the daemons write about its own topology.
	for _, kind := range []string{"leader", "code record", "holder", "spec", "supervisor", "crash"} {
		wantDenied(t, "worker Put "+kind+" "+own[kind], put(w, own[kind])(ctx))
	}
	wantDenied(t, "worker Get of the whole prefix", get(w, layout.Prefix+"/", clientv3.WithPrefix())(ctx))
	wantDenied(t, "worker Get of every assignment", get(w, layout.Assignments(), clientv3.WithPrefix())(ctx))
	wantDenied(t, "worker Get of the supervisors", get(w, layout.Supervisors(), clientv3.WithPrefix())(ctx))
	wantDenied(t, "worker Put outside the prefix", put(w, "/elsewhere")(ctx))
	_, err = w.UserAdd(ctx, "intruder", "x")
	wantDenied(t, "worker UserAdd", err)
	_, err = w.RoleGrantPermission(ctx, cred.User, "/", "\x00", ReadWrite)
	wantDenied(t, "worker grants its role more", err)
}

// assertWatch checks that w may (or may not) watch key: a write by writer
// reaches an allowed watch; a refused watch is cancelled for want of
// permission.
func assertWatch(t *testing.T, w, writer *clientv3.Client, key string, allowed bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wc := w.Watch(clientv3.WithRequireLeader(ctx), key, clientv3.WithCreatedNotify())
	first := <-wc
	if !allowed {
		if !first.Canceled || !strings.Contains(first.CancelReason+errString(first.Err()), "permission denied") {
			t.Errorf("watch of %s: %+v, want it cancelled: permission denied", key, first)
		}
		return
	}
	if first.Canceled || first.Err() != nil {
		t.Fatalf("watch of %s: %+v, %v", key, first, first.Err())
	}
	if _, err := writer.Put(ctx, key, "changed"); err != nil {
		t.Fatal(err)
	}
	select {
	case resp := <-wc:
		if len(resp.Events) != 1 || string(resp.Events[0].Kv.Value) != "changed" {
			t.Errorf("watch of %s: %+v, want the change", key, resp)
		}
	case <-ctx.Done():
		t.Errorf("watch of %s: no event", key)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
