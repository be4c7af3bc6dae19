package etcdstore_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/coordstore/etcdstore"
)

// calls runs every method of s once, each a write by generation 1.
func calls(ctx context.Context, s coordstore.Store) map[string]error {
	k := coordstore.Key{Owner: "o", Stream: "s", Partition: "p"}
	out := map[string]error{}
	_, out["Acquire"] = s.Acquire(ctx, "o")
	_, out["Generation"] = s.Generation(ctx, "o")
	_, _, out["LoadCoordinator"] = s.LoadCoordinator(ctx, "o")
	_, out["SwapCoordinator"] = s.SwapCoordinator(ctx, k.Fence(1), 0, coordstore.Record{Committed: 1})
	_, _, out["GetMeta"] = s.GetMeta(ctx, k, 1)
	_, _, out["PrevMeta"] = s.PrevMeta(ctx, k, 2)
	out["PutMeta"] = s.PutMeta(ctx, 1, k, 1, []byte("v"))
	out["RemoveMeta"] = s.RemoveMeta(ctx, 1, k, 1)
	out["CleanupMetaBefore"] = s.CleanupMetaBefore(ctx, 1, k, 2)
	return out
}

// refusedAddr returns a loopback address nothing listens on.
func refusedAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// silentAddr returns a loopback address that accepts connections and
// never answers, like a member that hangs; it closes when the test ends.
func silentAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	})
	t.Cleanup(func() {
		l.Close()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

// TestUnreachable: with the cluster out of reach, every call fails within
// the request timeout with a retryable error marked failure.Unavailable
// (so the Trident runtime backs off and replays instead of stopping),
// whether connections are refused or hang; when the caller's own deadline
// is the shorter one, the error also matches context.DeadlineExceeded.
func TestUnreachable(t *testing.T) {
	const timeout = 300 * time.Millisecond
	for _, c := range []struct {
		name     string
		addr     func(*testing.T) string
		deadline time.Duration // of the caller's context
	}{
		{"refused", refusedAddr, 20 * time.Second},
		{"silent", silentAddr, 20 * time.Second},
		{"caller deadline", silentAddr, timeout / 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := etcdstore.Dial(clientv3.Config{
				Endpoints:   []string{c.addr(t)},
				DialTimeout: 100 * time.Millisecond,
				Logger:      zap.NewNop(),
			}, "/unreachable", etcdstore.Options{RequestTimeout: timeout})
			if err != nil {
				t.Fatalf("Dial: %v (the client connects lazily: Dial must not fail)", err)
			}
			defer s.Close()
			ctx, cancel := context.WithTimeout(t.Context(), c.deadline)
			defer cancel()
			start := time.Now()
			for m, err := range calls(ctx, s) {
				if !failure.IsUnavailable(err) {
					t.Errorf("%s = %v (%v), want an error marked failure.Unavailable", m, err, failure.KindOf(err))
				}
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("%s = %v, want it to match context.DeadlineExceeded", m, err)
				}
			}
			if c.deadline > timeout && ctx.Err() != nil {
				t.Fatalf("the calls took %v, until the caller's deadline: the %v request timeout did not bound them",
					time.Since(start), timeout)
			}
		})
	}
}
