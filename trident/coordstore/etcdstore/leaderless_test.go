package etcdstore_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/squallstream/squall/cluster/etcdembed"
	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/trident/coordstore/etcdstore"
)

// embeddedCluster starts n etcd members of one cluster on loopback, each
// in a temporary directory, with a short election timeout. stop stops
// member i; the members still running stop when the test ends.
func embeddedCluster(t *testing.T, n int) (members []*etcdembed.Server, stop func(i int)) {
	t.Helper()
	peers := make([]string, n)
	initial := make([]string, n)
	for i := range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		peers[i] = "http://" + l.Addr().String()
		l.Close()
		initial[i] = fmt.Sprintf("m%d=%s", i, peers[i])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	members = make([]*etcdembed.Server, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n { // together: each waits for a quorum
		wg.Go(func() {
			members[i], errs[i] = etcdembed.Start(ctx, etcdembed.Config{
				Dir: t.TempDir(), Name: fmt.Sprintf("m%d", i), PeerURL: peers[i],
				InitialCluster: strings.Join(initial, ","), ClusterToken: t.Name(),
				TickInterval: 50 * time.Millisecond, ElectionTimeout: 500 * time.Millisecond,
			})
		})
	}
	wg.Wait()
	stops := make([]func(), n)
	for i, m := range members {
		if m != nil {
			stops[i] = sync.OnceFunc(m.Close) // embed's Close may not run twice
			t.Cleanup(stops[i])
		}
	}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("member %d: %v", i, err)
		}
	}
	return members, func(i int) { stops[i]() }
}

// TestMemberWithoutLeaderRefusesAtOnce: a member cut off from its
// cluster's quorum (here, the two others stopped) has no leader. The
// store's requests to it fail at once, or after the client's own short
// retries, retryably (failure.Unavailable), instead of each waiting out
// the request timeout: it asks etcd to require a leader
// (clientv3.WithRequireLeader), so a coordinator on that member backs off
// and retries, and its first request after the partition heals is not
// stuck behind one that waits for a leader.
func TestMemberWithoutLeaderRefusesAtOnce(t *testing.T) {
	members, stop := embeddedCluster(t, 3)
	const timeout = 8 * time.Second
	s, err := etcdstore.Dial(clientConfig(members[0].Endpoints()), "/leaderless", etcdstore.Options{RequestTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Acquire(t.Context(), "o"); err != nil {
		t.Fatalf("Acquire with a leader: %v", err)
	}
	stop(1)
	stop(2)
	cli := client(t, members[0].Endpoints())
	deadline := time.Now().Add(30 * time.Second)
	for { // the member steps down once it has not heard a quorum for an election timeout
		st, err := cli.Status(t.Context(), members[0].Endpoints()[0])
		if err == nil && st.Leader == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("member 0 still has a leader (%v)", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for m, err := range callsTimed(t.Context(), s, func(m string, d time.Duration) {
		t.Logf("%s failed after %v", m, d)
		if d >= timeout/2 {
			t.Errorf("%s took %v against a member without a leader: it waited for the %v request timeout", m, d, timeout)
		}
	}) {
		if !failure.IsUnavailable(err) {
			t.Errorf("%s = %v, want an error marked failure.Unavailable", m, err)
		}
	}
}

// callsTimed is calls, reporting how long each took to took.
func callsTimed(ctx context.Context, s *etcdstore.Store, took func(m string, d time.Duration)) map[string]error {
	out := map[string]error{}
	for m, call := range callList(s) {
		start := time.Now()
		out[m] = call(ctx)
		took(m, time.Since(start))
	}
	return out
}
