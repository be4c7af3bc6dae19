package leader

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"

	"github.com/squallstream/squall/cluster/internal/etcdtest"
	"github.com/squallstream/squall/internal/notify"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const prefix = "/test/leader"

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

type running struct {
	c    *Candidate
	stop func()
}

// start runs a candidate until the test ends or stop is called.
func start(t *testing.T, cli *clientv3.Client, id string, ready func(context.Context) error, wake func() <-chan struct{}) running {
	t.Helper()
	c, err := New(Config{Client: cli, Prefix: prefix, ID: id, TTL: time.Second, Ready: ready, Wake: wake, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := c.Run(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("Run = %v", err)
		}
	}()
	var once sync.Once
	stop := func() { once.Do(func() { cancel(); wg.Wait() }) }
	t.Cleanup(stop)
	return running{c, stop}
}

// waitLeader waits until the candidate holds a leadership.
func waitLeader(t *testing.T, c *Candidate) *Leadership {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		ch := c.Changed()
		if l := c.Current(); l != nil {
			return l
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("%s did not become leader", c.cfg.ID)
		}
	}
}

func TestOneLeaderOthersNameIt(t *testing.T) {
	cli := etcdtest.Client(t, etcdtest.Embedded(t))
	a := start(t, cli, "nimbus-a", nil, nil)
	la := waitLeader(t, a.c)
	b := start(t, cli, "nimbus-b", nil, nil)
	// b is queued behind a: two keys under the prefix.
	etcdtest.WaitFor(t, cli, prefix+"/", 10*time.Second, "b queued", func(kv map[string]string) bool { return len(kv) == 2 })
	ctx := context.Background()
	_, err := b.c.Leadership(ctx)
	var nl *NotLeaderError
	if !errors.As(err, &nl) || nl.Leader != "nimbus-a" || !errors.Is(err, ErrNotLeader) {
		t.Fatalf("b.Leadership = %v, want a NotLeaderError naming nimbus-a", err)
	}
	if _, err := la.Write(ctx, clientv3.OpPut("/test/assignments/t1", "v1")); err != nil {
		t.Fatalf("leader write: %v", err)
	}

	a.stop() // resigns: b takes over at once, not after a's TTL
	select {
	case <-la.Done():
	default:
		t.Fatal("a's leadership not done after Run returned")
	}
	lb := waitLeader(t, b.c)
	if lb.Rev() <= la.Rev() {
		t.Fatalf("new leadership rev %d not after old %d", lb.Rev(), la.Rev())
	}
	if _, err := la.Write(ctx, clientv3.OpPut("/test/assignments/t1", "stale")); !errors.Is(err, ErrDeposed) {
		t.Fatalf("old leader's write = %v, want ErrDeposed", err)
	}
	if _, err := lb.Write(ctx, clientv3.OpPut("/test/assignments/t1", "v2")); err != nil {
		t.Fatal(err)
	}
	resp, err := cli.Get(ctx, "/test/assignments/t1")
	if err != nil || string(resp.Kvs[0].Value) != "v2" {
		t.Fatalf("assignment = %v, %v", resp, err)
	}
}

// A leadership whose lease is gone (as after a pause longer than its TTL)
// cannot write, though its holder has not noticed yet.
func TestWriteAfterLeaseLossIsRejected(t *testing.T) {
	cli := etcdtest.Client(t, etcdtest.Embedded(t))
	a := start(t, cli, "nimbus-a", nil, nil)
	la := waitLeader(t, a.c)
	ctx := context.Background()
	// What a pause does, without the pause: the lease expires under it.
	resp, err := cli.Get(ctx, la.Key())
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("election key: %v %v", resp, err)
	}
	if _, err := cli.Revoke(ctx, clientv3.LeaseID(resp.Kvs[0].Lease)); err != nil {
		t.Fatal(err)
	}
	if _, err := la.Write(ctx, clientv3.OpPut("/test/assignments/t1", "stale")); !errors.Is(err, ErrDeposed) {
		t.Fatalf("write after the lease was revoked = %v, want ErrDeposed", err)
	}
	if got, _ := cli.Get(ctx, "/test/assignments/t1"); len(got.Kvs) != 0 {
		t.Fatalf("deposed write landed: %v", got.Kvs)
	}
	<-la.Done()
	// The candidate campaigns again and leads with a new fencing token.
	l2 := waitLeader(t, a.c)
	if l2 == la || l2.Rev() <= la.Rev() {
		t.Fatalf("re-elected leadership %v after %v", l2, la)
	}
}

// The seed rule: no campaign without the code, and a resignation when the
// code went missing while queued.
func TestSeedRule(t *testing.T) {
	cli := etcdtest.Client(t, etcdtest.Embedded(t))
	var sig notify.Signal
	var hasCode atomic.Bool
	var checks atomic.Int32
	ready := func(context.Context) error {
		checks.Add(1)
		if hasCode.Load() {
			return nil
		}
		return errors.New("missing the code of topology t1")
	}
	b := start(t, cli, "nimbus-b", ready, sig.Wait)
	// b checked, and is not in the election.
	for checks.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	if id, _ := LeaderID(context.Background(), cli, prefix); id != "" {
		t.Fatalf("leader %q while the only candidate lacks code", id)
	}
	hasCode.Store(true)
	sig.Broadcast()
	lb := waitLeader(t, b.c)
	b.stop()
	<-lb.Done()

	// a leads; b (ready) queues behind it; then b loses the code, a steps
	// down: b wins, checks again, resigns; with the code back it leads.
	a := start(t, cli, "nimbus-a", nil, nil)
	la := waitLeader(t, a.c)
	b = start(t, cli, "nimbus-b", ready, sig.Wait)
	etcdtest.WaitFor(t, cli, prefix+"/", 10*time.Second, "b queued", func(kv map[string]string) bool { return len(kv) == 2 })
	hasCode.Store(false)
	before := checks.Load()
	a.stop()
	<-la.Done()
	etcdtest.WaitFor(t, cli, prefix+"/", 10*time.Second, "b resigned", func(kv map[string]string) bool { return len(kv) == 0 })
	if checks.Load() == before {
		t.Fatal("b did not check the seed rule on winning")
	}
	if b.c.Current() != nil {
		t.Fatal("b leads without the code")
	}
	hasCode.Store(true)
	sig.Broadcast()
	waitLeader(t, b.c)
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []Config{{}, {Client: &clientv3.Client{}}, {Client: &clientv3.Client{}, Prefix: "/p"},
		{Client: &clientv3.Client{}, Prefix: "/p", ID: "x", TTL: -1}} {
		if _, err := New(c); err == nil {
			t.Errorf("New(%+v) accepted", c)
		}
	}
}
