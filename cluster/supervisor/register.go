package supervisor

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/squallstream/squall/cluster/leader"
	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/internal/backoff"
)

// ErrDuplicateID: another live supervisor holds this supervisor's ID.
var ErrDuplicateID = errors.New("supervisor: duplicate ID")

// claim registers the supervisor under a new lease, only if no other
// holds its key (create if absent). A key held by an earlier run of this
// supervisor (killed, its lease not yet expired) goes away within its
// TTL: claim waits for it. One still held after twice the TTL belongs to
// a live supervisor with the same ID: claim returns an error matching
// ErrDuplicateID, naming it.
func (s *Supervisor) claim(ctx context.Context) (*concurrency.Session, error) {
	retry := backoff.Sequence{Backoff: backoff.Exponential(int64(100*time.Millisecond), int64(5*time.Second))}
	ttl := max(1, int(math.Ceil(s.cfg.TTL.Seconds())))
	key := s.keys.Supervisor(s.cfg.ID)
	var heldSince time.Time
	for ctx.Err() == nil {
		sess, err := leader.NewSession(ctx, s.cfg.Client, ttl)
		var resp *clientv3.TxnResponse
		if err == nil {
			resp, err = s.cfg.Client.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
				Then(clientv3.OpPut(key, s.info(), clientv3.WithLease(sess.Lease()))).Else(clientv3.OpGet(key)).Commit()
			if err != nil || !resp.Succeeded {
				sess.Close()
			}
		}
		switch {
		case err != nil:
			if ctx.Err() == nil {
				d := time.Duration(retry.Next())
				s.log.Warn("supervisor: registering failed; retrying", "err", err, "in", d)
				s.sleep(ctx, d)
			}
			continue
		case resp.Succeeded:
			s.log.Info("supervisor: registered", "lease", sess.Lease(), "ports", s.cfg.Ports)
			return sess, nil
		}
		var other meta.SupervisorInfo
		if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
			meta.Decode(key, kvs[0].Value, &other)
		}
		now := s.clock.Now()
		if heldSince.IsZero() {
			heldSince = now
			s.log.Info("supervisor: the ID is registered, by an earlier run of this supervisor or another one; waiting for its lease to expire",
				"pid", other.PID)
		}
		if now.Sub(heldSince) > 2*s.cfg.TTL+time.Second {
			return nil, fmt.Errorf("%w: another supervisor (pid %d) is registered as %q and alive; give each supervisor its own --id",
				ErrDuplicateID, other.PID, s.cfg.ID)
		}
		s.sleep(ctx, max(s.cfg.TTL/4, 100*time.Millisecond))
	}
	return nil, ctx.Err()
}

// keepRegistered keeps the registration until ctx is done, then revokes
// its lease. A lost lease or a deleted key is registered again (claim);
// it returns claim's error if the ID then belongs to another supervisor.
func (s *Supervisor) keepRegistered(ctx context.Context, sess *concurrency.Session) error {
	key := s.keys.Supervisor(s.cfg.ID)
	for first := true; ; first = false {
		s.mu.Lock()
		s.session = sess
		s.mu.Unlock()
		if !first {
			s.republishCrashes(ctx, sess)
		}
		wctx, cancel := context.WithCancel(ctx)
		deleted := s.watchDelete(wctx, key)
		select {
		case <-ctx.Done():
		case <-sess.Done():
			s.log.Warn("supervisor: registration lease lost; registering again")
		case <-deleted:
			s.log.Warn("supervisor: registration deleted; registering again")
		}
		cancel()
		s.mu.Lock()
		s.session = nil
		s.mu.Unlock()
		sess.Close()
		if ctx.Err() != nil {
			return nil
		}
		var err error
		if sess, err = s.claim(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}

// watchDelete returns a channel closed when key is deleted (until ctx is
// done).
func (s *Supervisor) watchDelete(ctx context.Context, key string) <-chan struct{} {
	out := make(chan struct{})
	wc := s.cfg.Client.Watch(clientv3.WithRequireLeader(ctx), key)
	go func() {
		for wr := range wc {
			for _, ev := range wr.Events {
				if ev.Type == clientv3.EventTypeDelete {
					close(out)
					return
				}
			}
		}
	}()
	return out
}

// info is the supervisor's registration record.
func (s *Supervisor) info() string {
	si := meta.SupervisorInfo{ID: s.cfg.ID, Ports: slices.Sorted(slices.Values(s.cfg.Ports)), PID: os.Getpid(),
		Capacity: s.cfg.Capacity}
	if s.cfg.Listener != nil {
		si.LogURL = s.logURL()
	}
	return meta.Encode(si)
}
