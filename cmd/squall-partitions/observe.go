package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"sync"
	"time"

	kafka "github.com/segmentio/kafka-go"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/squallstream/squall/cluster/leader"
	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/internal/clock"
	"github.com/squallstream/squall/internal/nemesis"
)

// topologyName is the topology the harness runs.
const topologyName = "roompresence"

// observer is the harness's view of the cluster, from the observer's
// namespace (never partitioned): it watches status/<topology> in etcd
// for every commit share 0 publishes, looks up the leader nimbus and the
// hosts of the shares, and reads the spout's progress from Kafka.
type observer struct {
	cli  *clientv3.Client
	keys meta.Layout
	dial nsDialer

	mu      sync.Mutex
	changed chan struct{} // closed and replaced at each status event
	last    meta.Status   // the last status seen
	events  int
	// split-brain detection: the first committed txid each generation
	// published (above 0), and the violations seen.
	base       map[uint64]uint64
	splitBrain []string
	// the highest committed txid published, and by which generation.
	maxCommitted, maxGen uint64
	timeline             func(format string, args ...any)

	sigs signals // the cluster's reactions (detect.go)
}

// newObserver connects to etcd from the namespace of dial.
func newObserver(endpoints []string, tc *tls.Config, dial nsDialer, keys meta.Layout, timeline func(string, ...any)) (*observer, error) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, TLS: tc, DialTimeout: 5 * time.Second,
		Logger: zap.NewNop(), DialOptions: []grpc.DialOption{grpc.WithContextDialer(dial.grpcDial)}})
	if err != nil {
		return nil, err
	}
	return &observer{cli: cli, keys: keys, dial: dial, changed: make(chan struct{}), base: map[uint64]uint64{},
		timeline: timeline}, nil
}

func (o *observer) close() { o.cli.Close() }

// watch follows the status key until ctx is done. It is the observer's
// only goroutine; its owner is the schedule's run.
func (o *observer) watch(ctx context.Context) {
	key := o.keys.Status(topologyName)
	var rev int64
	for ctx.Err() == nil {
		if rev == 0 {
			gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			resp, err := o.cli.Get(gctx, key)
			cancel()
			if err != nil {
				sleep(ctx, 500*time.Millisecond)
				continue
			}
			for _, kv := range resp.Kvs {
				o.record(kv.Value)
			}
			rev = resp.Header.Revision
		}
		wctx, cancel := context.WithCancel(ctx)
		for resp := range o.cli.Watch(clientv3.WithRequireLeader(wctx), key, clientv3.WithRev(rev+1)) {
			if resp.Err() != nil || resp.Canceled {
				if resp.CompactRevision > 0 {
					rev = 0
				}
				break
			}
			for _, ev := range resp.Events {
				if ev.Type == clientv3.EventTypePut {
					o.record(ev.Kv.Value)
				}
				rev = ev.Kv.ModRevision
			}
		}
		cancel()
		sleep(ctx, 200*time.Millisecond)
	}
}

// record takes one status value in, and checks it against the others.
// The newer owner loads every commit of the older ones before its first
// status, so with fencing
//
//   - no older generation commits past where a newer one started: a
//     commit that does is two owners committing;
//   - no generation publishes a committed txid (above 0, which a new
//     owner may publish before it has loaded its record) below one
//     already published by itself or an older generation: a commit
//     that goes back was overwritten by another owner.
//
// Either is reported as a split brain. A superseded owner's late status
// below what it published before is neither.
func (o *observer) record(v []byte) {
	var s meta.Status
	if json.Unmarshal(v, &s) != nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.last.Generation != s.Generation || o.last.PID != s.PID {
		o.timeline("status: share 0 is pid %d on %s, generation %d, committed %d", s.PID, s.Slot, s.Generation, s.Committed)
	}
	if _, ok := o.base[s.Generation]; !ok && s.Committed > 0 {
		o.base[s.Generation] = s.Committed
	}
	for g, base := range o.base {
		if g > s.Generation && s.Committed > base {
			msg := fmt.Sprintf("generation %d (pid %d) published commit %d after generation %d had started from %d",
				s.Generation, s.PID, s.Committed, g, base)
			o.splitBrain = append(o.splitBrain, msg)
			o.timeline("SPLIT BRAIN: %s", msg)
		}
	}
	if s.Committed > 0 && s.Generation >= o.maxGen && s.Committed < o.maxCommitted {
		msg := fmt.Sprintf("generation %d (pid %d) published commit %d after generation %d had published %d: a commit was lost",
			s.Generation, s.PID, s.Committed, o.maxGen, o.maxCommitted)
		o.splitBrain = append(o.splitBrain, msg)
		o.timeline("SPLIT BRAIN: %s", msg)
	}
	if s.Generation >= o.maxGen && s.Committed >= o.maxCommitted {
		o.maxCommitted, o.maxGen = s.Committed, s.Generation
	}
	if s.Generation >= o.last.Generation {
		o.last = s
	}
	o.events++
	close(o.changed)
	o.changed = make(chan struct{})
}

// status returns the last status seen and a channel closed at the next.
func (o *observer) status() (meta.Status, <-chan struct{}) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.last, o.changed
}

// splitBrains returns the violations seen.
func (o *observer) splitBrains() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.splitBrain...)
}

// waitCommit waits until a status shows a committed txid above c, and
// returns when it saw it (false: not before deadline).
func (o *observer) waitCommit(ctx context.Context, c uint64, deadline time.Time) (time.Time, bool) {
	for {
		s, ch := o.status()
		if s.Committed > c {
			return time.Now(), true
		}
		t := time.NewTimer(time.Until(deadline))
		select {
		case <-ch:
			t.Stop()
		case <-t.C:
			return time.Time{}, false
		case <-ctx.Done():
			t.Stop()
			return time.Time{}, false
		}
	}
}

// get reads key with a short bound (etcd may be partly unreachable).
func (o *observer) get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	return o.cli.Get(ctx, key, opts...)
}

// leaderHost returns the host of the leader nimbus, whose ID is its
// advertised address.
func (o *observer) leaderHost(ctx context.Context, n *network) (nemesis.Host, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	id, err := leader.LeaderID(ctx, o.cli, o.keys.Leader())
	if err != nil {
		return "", err
	}
	host, _, err := net.SplitHostPort(id)
	if err != nil {
		return "", err
	}
	if h := n.hostOf(host); h != "" {
		return h, nil
	}
	return "", fmt.Errorf("no host at %s", host)
}

// shareWorker returns the slot running share i of the topology and that
// worker's registration (PID zero when it has none).
func (o *observer) shareWorker(ctx context.Context, i int) (meta.Slot, meta.WorkerInfo, error) {
	resp, err := o.get(ctx, o.keys.Assignment(topologyName))
	if err != nil {
		return meta.Slot{}, meta.WorkerInfo{}, err
	}
	if len(resp.Kvs) == 0 {
		return meta.Slot{}, meta.WorkerInfo{}, fmt.Errorf("no assignment")
	}
	var a meta.Assignment
	if err := json.Unmarshal(resp.Kvs[0].Value, &a); err != nil {
		return meta.Slot{}, meta.WorkerInfo{}, err
	}
	if i >= len(a.Workers) {
		return meta.Slot{}, meta.WorkerInfo{}, fmt.Errorf("the assignment has %d workers", len(a.Workers))
	}
	slot := a.Workers[i].Slot
	var w meta.WorkerInfo
	if resp, err := o.get(ctx, o.keys.Worker(topologyName, slot)); err == nil && len(resp.Kvs) == 1 {
		json.Unmarshal(resp.Kvs[0].Value, &w)
	}
	return slot, w, nil
}

// kafkaProgress returns how many records of topic the topology has not
// committed yet: the end offsets minus the offsets its spout mirrors to
// the consumer group named after the topology.
func kafkaProgress(ctx context.Context, dial nsDialer, broker, topic string) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c := &kafka.Client{Addr: kafka.TCP(broker), Timeout: 10 * time.Second, Transport: &kafka.Transport{Dial: dial.DialContext}}
	md, err := c.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return 0, err
	}
	var ids []int
	var reqs []kafka.OffsetRequest
	for _, t := range md.Topics {
		for _, p := range t.Partitions {
			ids = append(ids, p.ID)
			reqs = append(reqs, kafka.LastOffsetOf(p.ID))
		}
	}
	if len(ids) == 0 {
		return 0, fmt.Errorf("topic %s has no partitions", topic)
	}
	lo, err := c.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: reqs}})
	if err != nil {
		return 0, err
	}
	of, err := c.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: topologyName, Topics: map[string][]int{topic: ids}})
	if err != nil {
		return 0, err
	}
	if of.Error != nil {
		return 0, of.Error
	}
	done := map[int]int64{}
	for _, p := range of.Topics[topic] {
		done[p.Partition] = max(p.CommittedOffset, 0)
	}
	var left int64
	for _, p := range lo.Topics[topic] {
		if p.Error != nil {
			return 0, p.Error
		}
		left += max(p.LastOffset-done[p.Partition], 0)
	}
	return left, nil
}

func sleep(ctx context.Context, d time.Duration) { _ = clock.Sleep(ctx, clock.Real(), d) }
