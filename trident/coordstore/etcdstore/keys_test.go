package etcdstore

import (
	"errors"
	"strings"
	"testing"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/txn"
)

func TestEscape(t *testing.T) {
	names := []string{"a", "a/b", "a%2fb", "a%b", "%", "/", "a b", "a\x00b", "ünï", "topic@3", "x.y-z_1:2"}
	seen := map[string]string{}
	for _, n := range names {
		e := escape(n)
		if strings.ContainsAny(e, "/ \x00") {
			t.Errorf("escape(%q) = %q contains a separator or a control byte", n, e)
		}
		if other, ok := seen[e]; ok {
			t.Errorf("escape(%q) = escape(%q) = %q", n, other, e)
		}
		seen[e] = n
	}
	if got := escape("topic@3"); got != "topic@3" {
		t.Errorf("escape(topic@3) = %q, want it unchanged", got)
	}
	if got := escape("a/b%c"); got != "a%2fb%25c" {
		t.Errorf("escape(a/b%%c) = %q", got)
	}
}

func TestTxIDOrder(t *testing.T) {
	txids := []txn.TxID{1, 2, 9, 10, 15, 16, 255, 256, 1 << 32, 1<<63 - 1, 1 << 63, coordstore.MaxTxID - 1}
	for i, tx := range txids {
		s := txidString(tx)
		if back, ok := parseTxID(s); !ok || back != tx {
			t.Errorf("parseTxID(txidString(%d)) = %d, %v", tx, back, ok)
		}
		if i > 0 && txidString(txids[i-1]) >= s {
			t.Errorf("txidString(%d) = %q does not sort after txidString(%d)", tx, s, txids[i-1])
		}
	}
	for _, bad := range []string{"", "7", "000000000000000G", "00000000000000AA", "+000000000000007"} {
		if _, ok := parseTxID(bad); ok {
			t.Errorf("parseTxID(%q) accepted", bad)
		}
	}
}

func TestClassify(t *testing.T) {
	ctx := t.Context()
	for _, c := range []struct {
		err  error
		kind failure.Kind
	}{
		{rpctypes.ErrGRPCNoLeader, failure.Outage},
		{rpctypes.ErrNoLeader, failure.Outage},
		{rpctypes.ErrLeaderChanged, failure.Outage},
		{rpctypes.ErrTimeout, failure.Outage},
		{rpctypes.ErrNotLeader, failure.Outage},
		{rpctypes.ErrTooManyRequests, failure.Outage},
		{rpctypes.ErrNoSpace, failure.Outage},
		{clientv3.ErrNoAvailableEndpoints, failure.Outage},
		{status.Error(codes.Unavailable, "connection refused"), failure.Outage},
		{status.Error(codes.Internal, "bad frame"), failure.Retry},
		{rpctypes.ErrRequestTooLarge, failure.Fatal},
		{rpctypes.ErrPermissionDenied, failure.Fatal},
		{rpctypes.ErrInvalidAuthToken, failure.Fatal},
		{rpctypes.ErrCorrupt, failure.Fatal},
		{status.Error(codes.Canceled, "grpc: the client connection is closing"), failure.Fatal},
		{errors.New("something else"), failure.Fatal},
	} {
		err := classify(ctx, "op", c.err, 0)
		if got := failure.KindOf(err); got != c.kind {
			t.Errorf("classify(%v) is %v, want %v", c.err, got, c.kind)
		}
		if !errors.Is(err, c.err) {
			t.Errorf("classify(%v) = %v lost its cause", c.err, err)
		}
	}
}
