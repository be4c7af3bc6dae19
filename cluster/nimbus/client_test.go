package nimbus

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/squallstream/squall/cluster/internal/etcdtest"
	"github.com/squallstream/squall/cluster/meta"
)

// TestClientWaitsForTheNextLeader: the leader named in etcd is gone
// (connection refused) while a standby takes over; the client looks the
// leader up again instead of failing.
func TestClientWaitsForTheNextLeader(t *testing.T) {
	cli := etcdtest.Client(t, etcdtest.Embedded(t))
	keys := meta.New("/c")
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	dead.Close()
	live := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("[]"))
	}))
	defer live.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := cli.Put(ctx, keys.Leader()+"/1", deadAddr); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(time.Second)
		cli.Delete(ctx, keys.Leader()+"/1")
		cli.Put(ctx, keys.Leader()+"/2", strings.TrimPrefix(live.URL, "http://"))
	}()
	c := &Client{Etcd: cli, Keys: keys}
	if _, err := c.List(ctx); err != nil {
		t.Fatalf("List across a leader change: %v", err)
	}
	// Asked of one nimbus (--nimbus), a refusal is reported at once.
	one := &Client{Nimbus: deadAddr}
	start := time.Now()
	if _, err := one.List(ctx); err == nil || time.Since(start) > 5*time.Second {
		t.Fatalf("a dead --nimbus: %v after %v", err, time.Since(start))
	}
}
