package etcdauth

import (
	"errors"
	"testing"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"

	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/coordstore/etcdstore"
	"github.com/squallstream/squall/txn"
)

func TestRevokeAndGrantAgain(t *testing.T) {
	eps, root := secured(t)
	ctx := ctxT(t)
	old, err := GrantTopology(ctx, root, "", mine)
	if err != nil {
		t.Fatal(err)
	}
	w := connect(t, eps, old.User, old.Password, nil)
	wantOK(t, "worker Put its status", put(w, layout.Status(mine))(ctx))

	// Granting again: a new password; the old one no longer authenticates.
	next, err := GrantTopology(ctx, root, "", mine)
	if err != nil {
		t.Fatal(err)
	}
	if next.User != old.User || next.Password == old.Password {
		t.Fatalf("granted again: %v, want the same user with a new password", next)
	}
	if _, err := dial(eps, old.User, old.Password, nil); !errors.Is(err, rpctypes.ErrAuthFailed) {
		t.Errorf("the old password after a new grant: %v, want authentication failed", err)
	}
	connect(t, eps, next.User, next.Password, nil)

	if err := RevokeTopology(ctx, root, mine); err != nil {
		t.Fatal(err)
	}
	if err := RevokeTopology(ctx, root, mine); err != nil {
		t.Errorf("revoking again: %v", err)
	}
	if _, err := dial(eps, next.User, next.Password, nil); !errors.Is(err, rpctypes.ErrAuthFailed) {
		t.Errorf("a revoked credential: %v, want authentication failed", err)
	}
	// The client that was connected before the revocation is refused too.
	if err := put(w, layout.Status(mine))(ctx); err == nil {
		t.Error("a client of the revoked user still writes")
	}
	if _, err := root.RoleGet(ctx, TopologyRole(mine)); !errors.Is(err, rpctypes.ErrRoleNotFound) {
		t.Errorf("the revoked topology's role: %v, want not found", err)
	}
}

func TestTopologyNamesAreChecked(t *testing.T) {
	_, root := secured(t)
	ctx := ctxT(t)
	for _, name := range []string{"", "a/b", "a b"} {
		if _, err := GrantTopology(ctx, root, "", name); !errors.Is(err, ErrInvalid) {
			t.Errorf("GrantTopology(%q) = %v, want ErrInvalid", name, err)
		}
		if err := RevokeTopology(ctx, root, name); !errors.Is(err, ErrInvalid) {
			t.Errorf("RevokeTopology(%q) = %v, want ErrInvalid", name, err)
		}
	}
}

// TestCoordinationStoreRunsUnderTheTopologyCredential runs the cluster's
// coordination store (etcdstore under meta's Coordination prefix, as
// workers do) with a topology's credential: its own owner works, whatever
// etcdstore escapes in the name; another topology's is refused.
func TestCoordinationStoreRunsUnderTheTopologyCredential(t *testing.T) {
	eps, root := secured(t)
	ctx := ctxT(t)
	for _, name := range []string{mine, "w%c-é"} {
		cred, err := GrantTopology(ctx, root, "", name)
		if err != nil {
			t.Fatal(err)
		}
		st, err := etcdstore.New(connect(t, eps, cred.User, cred.Password, nil), layout.Coordination(), etcdstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		gen, err := st.Acquire(ctx, name)
		if err != nil {
			t.Fatalf("%s: Acquire: %v", name, err)
		}
		v, err := st.SwapCoordinator(ctx, coordstore.Fence{Owner: name, Generation: gen}, 0, coordstore.Record{Committed: 1})
		if err != nil {
			t.Fatalf("%s: SwapCoordinator: %v", name, err)
		}
		if _, ver, err := st.LoadCoordinator(ctx, name); err != nil || ver != v {
			t.Fatalf("%s: LoadCoordinator: version %v, %v; want %v", name, ver, err, v)
		}
		k := coordstore.Key{Owner: name, Stream: "s", Partition: "topic@0"}
		for txid := range uint64(3) {
			if err := st.PutMeta(ctx, gen, k, txn.TxID(txid+1), []byte("m")); err != nil {
				t.Fatalf("%s: PutMeta: %v", name, err)
			}
		}
		if err := st.CleanupMetaBefore(ctx, gen, k, 3); err != nil {
			t.Fatalf("%s: CleanupMetaBefore: %v", name, err)
		}
		if _, ok, err := st.PrevMeta(ctx, k, 3); err != nil || ok {
			t.Fatalf("%s: PrevMeta after the cleanup: %v, %v", name, ok, err)
		}
		if _, err := st.Acquire(ctx, theirs); !errors.Is(err, rpctypes.ErrPermissionDenied) {
			t.Errorf("%s: Acquire of another topology's ownership: %v, want permission denied", name, err)
		}
		if _, _, err := st.LoadCoordinator(ctx, theirs); !errors.Is(err, rpctypes.ErrPermissionDenied) {
			t.Errorf("%s: LoadCoordinator of another topology: %v, want permission denied", name, err)
		}
	}
}
