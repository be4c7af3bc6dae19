package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/squallstream/squall/cluster/meta"
)

// Detection: when the cluster noticed a fault. Every reaction of the
// cluster to a fault leaves a trace in etcd, which the observer watches
// from its namespace (never partitioned); the first trace after the
// fault started, while it holds, is its detection.
//
// The signals, by what they mean (docs/partitions.md, "Detection"):
const (
	// sigSupervisorLease: a supervisor's registration was deleted, its
	// lease expired (its host cut from etcd, frozen, killed or paused).
	sigSupervisorLease = "supervisor-lease"
	// sigWorkerLease: a worker's registration was deleted (its lease
	// expired, or its supervisor stopped it).
	sigWorkerLease = "worker-lease"
	// sigLeaderLease: a nimbus's election key was deleted: the leader (or
	// a standby) lost its lease, and a standby takes over.
	sigLeaderLease = "leader-lease"
	// sigReassigned: the leader nimbus wrote a new assignment of the
	// topology (a slot moved to another supervisor).
	sigReassigned = "reassigned"
	// sigNewOwner: a worker took ownership of the topology: a new owner
	// generation (share 0 restarted or moved).
	sigNewOwner = "new-owner"
	// sigErrorReport: a worker reported errors of the topology (a failed
	// batch, store or spout call the master or a task reported).
	sigErrorReport = "error-report"
	// sigCrash: a supervisor recorded a crash of a worker.
	sigCrash = "crash"
)

// reaction is one trace of a reaction, when the observer saw it.
type reaction struct {
	At   time.Time
	Name string
	Key  string
}

// classifier turns etcd events under the cluster's prefix into signals:
// deletions of leased keys, and puts that change a record (a put with
// the value already stored, such as a status refresh, is none). It is
// pure but for its memory of the last values.
type classifier struct {
	keys meta.Layout
	last map[string][]byte
}

func newClassifier(keys meta.Layout) *classifier {
	return &classifier{keys: keys, last: map[string][]byte{}}
}

// classify returns the signal event ev is, if any.
func (c *classifier) classify(del bool, key string, value []byte) (string, bool) {
	prev, known := c.last[key]
	if del {
		delete(c.last, key)
	} else {
		c.last[key] = value
	}
	changed := !known || !bytes.Equal(prev, value)
	k := c.keys
	switch {
	case strings.HasPrefix(key, k.Supervisors()) && del:
		return sigSupervisorLease, true
	case strings.HasPrefix(key, k.Workers()) && del:
		return sigWorkerLease, true
	case strings.HasPrefix(key, k.Leader()) && del:
		return sigLeaderLease, true
	case key == k.Assignment(topologyName) && !del && known && changed:
		return sigReassigned, true
	case key == k.Generation(topologyName) && !del && known && changed:
		return sigNewOwner, true
	case strings.HasPrefix(key, k.ErrorReports()) && !del && changed:
		return sigErrorReport, true
	case strings.HasPrefix(key, k.Crashes()) && !del && changed:
		return sigCrash, true
	}
	return "", false
}

// signals is the observer's record of the signals seen.
type signals struct {
	mu  sync.Mutex
	all []reaction
}

func (s *signals) add(sg reaction) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.all = append(s.all, sg)
}

// first returns the first signal seen in [from, to].
func (s *signals) first(from, to time.Time) (reaction, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sg := range s.all {
		if !sg.At.Before(from) && !sg.At.After(to) {
			return sg, true
		}
	}
	return reaction{}, false
}

// watchSignals follows every key under the cluster's prefix until ctx is
// done, recording signals (and printing them to the timeline). Its
// owner is the schedule's run, like watch.
func (o *observer) watchSignals(ctx context.Context) {
	cl := newClassifier(o.keys)
	prefix := strings.TrimSuffix(o.keys.Leader(), "nimbus/leader") // the cluster's prefix, with its slash
	var rev int64
	for ctx.Err() == nil {
		if rev == 0 {
			gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			resp, err := o.cli.Get(gctx, prefix, clientv3.WithPrefix())
			cancel()
			if err != nil {
				sleep(ctx, 500*time.Millisecond)
				continue
			}
			cl = newClassifier(o.keys)
			for _, kv := range resp.Kvs {
				cl.classify(false, string(kv.Key), kv.Value) // the starting values: no signal
			}
			rev = resp.Header.Revision
		}
		wctx, cancel := context.WithCancel(ctx)
		for resp := range o.cli.Watch(clientv3.WithRequireLeader(wctx), prefix, clientv3.WithPrefix(), clientv3.WithRev(rev+1)) {
			if resp.Err() != nil || resp.Canceled {
				if resp.CompactRevision > 0 {
					rev = 0
				}
				break
			}
			now := time.Now()
			for _, ev := range resp.Events {
				key := string(ev.Kv.Key)
				if name, ok := cl.classify(ev.Type == clientv3.EventTypeDelete, key, ev.Kv.Value); ok {
					o.sigs.add(reaction{At: now, Name: name, Key: key})
					o.timeline("signal: %s (%s)", name, strings.TrimPrefix(key, prefix))
				}
				rev = ev.Kv.ModRevision
			}
		}
		cancel()
		sleep(ctx, 200*time.Millisecond)
	}
}
