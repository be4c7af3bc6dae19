package nimbus

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/squallstream/squall/cluster/internal/etcdtest"
	"github.com/squallstream/squall/cluster/leader"
)

func TestMain(m *testing.M) {
	if os.Getenv(childVar) == "1" {
		os.Exit(childMain())
	}
	goleak.VerifyTestMain(m)
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func run(t *testing.T, n *Nimbus) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := n.Run(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("Run = %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// In one process on an embedded etcd: the leader submits and assigns; a
// standby refuses both, naming the leader, and syncs the code.
func TestSubmitOnLeaderOnly(t *testing.T) {
	cli := etcdtest.Client(t, etcdtest.Embedded(t))
	mk := func(id string) *Nimbus {
		n, err := New(Config{Client: cli, ID: id, CodeDir: t.TempDir(), TTL: time.Second, ReplicationFactor: 2, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		run(t, n)
		return n
	}
	a := mk("a")
	deadline := time.After(20 * time.Second)
	for {
		ch := a.Candidate().Changed()
		if a.Candidate().Current() != nil {
			break
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatal("a did not lead")
		}
	}
	b := mk("b")
	ctx := context.Background()
	if _, err := a.Submit(ctx, "t1", strings.NewReader("code")); err != nil {
		t.Fatalf("Submit on the leader: %v", err)
	}
	if err := a.WriteAssignment(ctx, "t1", []byte("w1")); err != nil {
		t.Fatal(err)
	}
	var nl *leader.NotLeaderError
	if _, err := b.Submit(ctx, "t2", strings.NewReader("code2")); !errors.As(err, &nl) || nl.Leader != "a" {
		t.Fatalf("Submit on the standby = %v, want NotLeaderError naming a", err)
	}
	if err := b.WriteAssignment(ctx, "t1", []byte("w2")); !errors.Is(err, leader.ErrNotLeader) {
		t.Fatalf("WriteAssignment on the standby = %v", err)
	}
	if m, err := b.Store().Missing(ctx); err != nil || len(m) != 0 {
		t.Fatalf("standby Missing after a replication factor of 2 = %v, %v", m, err)
	}
}
