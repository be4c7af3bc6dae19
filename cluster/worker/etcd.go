package worker

import (
	"context"
	"math"
	"os"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/squallstream/squall/cluster/leader"
	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/internal/backoff"
	"github.com/squallstream/squall/trident"
	"github.com/squallstream/squall/txn"
)

// assignment reads the topology's assignment (nil: none), retrying while
// etcd is unreachable.
func (w *worker) assignment(ctx context.Context) (*meta.Assignment, error) {
	waits := backoff.Sequence{Backoff: backoff.Exponential(int64(100*time.Millisecond), int64(2*time.Second))}
	for {
		a, _, err := w.readAssignment(ctx)
		if err == nil || ctx.Err() != nil {
			return a, err
		}
		w.log.Warn("worker: reading the assignment failed; retrying", "err", err)
		w.sleep(ctx, time.Duration(waits.Next()))
	}
}

func (w *worker) readAssignment(ctx context.Context) (*meta.Assignment, int64, error) {
	a, _, rev, err := readRecord[meta.Assignment](ctx, w.cfg.Client, w.keys.Assignment(w.cfg.Topology.Name))
	return a, rev, err
}

// readRecord reads the record at key: nil if there is none, its
// modification revision, and the store's revision.
func readRecord[T any](ctx context.Context, cli *clientv3.Client, key string) (*T, int64, int64, error) {
	resp, err := cli.Get(ctx, key)
	if err != nil {
		return nil, 0, 0, err
	}
	if len(resp.Kvs) == 0 {
		return nil, 0, resp.Header.Revision, nil
	}
	var v T
	if err := meta.Decode(key, resp.Kvs[0].Value, &v); err != nil {
		return nil, 0, 0, err
	}
	return &v, resp.Kvs[0].ModRevision, resp.Header.Revision, nil
}

// watchRecord sends the record at key (nil for none) now and after each
// change of it, until ctx is done. While etcd is unreachable it sends
// nothing: the worker runs on.
func watchRecord[T any](ctx context.Context, w *worker, key string, out chan<- *T) {
	for ctx.Err() == nil {
		v, _, rev, err := readRecord[T](ctx, w.cfg.Client, key)
		if err != nil {
			w.sleep(ctx, time.Second)
			continue
		}
		select {
		case out <- v:
		case <-ctx.Done():
			return
		}
		wctx, cancel := context.WithCancel(ctx)
		select {
		case <-w.cfg.Client.Watch(clientv3.WithRequireLeader(wctx), key, clientv3.WithRev(rev+1)):
		case <-ctx.Done():
		}
		cancel()
	}
}

// register keeps the worker's key under a live lease until ctx is done,
// then revokes the lease (the key and the status vanish).
func (w *worker) register(ctx context.Context, info string) {
	ttl := max(1, int(math.Ceil(w.cfg.TTL.Seconds())))
	waits := backoff.Sequence{Backoff: backoff.Exponential(int64(100*time.Millisecond), int64(2*time.Second))}
	key := w.keys.Worker(w.cfg.Topology.Name, w.cfg.Slot)
	for ctx.Err() == nil {
		sess, err := leader.NewSession(ctx, w.cfg.Client, ttl)
		if err == nil {
			if _, err = w.cfg.Client.Put(ctx, key, info, clientv3.WithLease(sess.Lease())); err != nil {
				sess.Close()
			}
		}
		if err != nil {
			if ctx.Err() == nil {
				d := time.Duration(waits.Next())
				w.log.Warn("worker: registering failed; retrying", "err", err, "in", d)
				w.sleep(ctx, d)
			}
			continue
		}
		waits.Reset()
		w.mu.Lock()
		w.sess = sess
		w.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-sess.Done():
			w.log.Warn("worker: lease lost; registering again")
		}
		w.mu.Lock()
		w.sess = nil
		w.mu.Unlock()
		sess.Close()
	}
}

// writeStatus writes the topology's status after commits, at most every
// StatusInterval, until ctx is done or the topology halts.
func (w *worker) writeStatus(ctx context.Context, r *trident.Running) {
	key := w.keys.Status(w.cfg.Topology.Name)
	var written txn.TxID
	var writtenLease clientv3.LeaseID
	var rev int64 // the key's mod revision as this worker last saw it (0: none)
	for ctx.Err() == nil {
		w.mu.Lock()
		sess := w.sess
		w.mu.Unlock()
		c := r.Committed()
		// Zero is what a worker knows before its master has read the
		// committed txid from the store: reporting it would make the
		// topology's committed txid go back (755 → 0 → 756) at a restart.
		if sess != nil && c > 0 && (c != written || sess.Lease() != writtenLease) {
			st := meta.Status{Topology: w.cfg.Topology.Name, Slot: w.cfg.Slot, PID: os.Getpid(),
				Generation: uint64(r.Generation()), Committed: uint64(c), Time: w.clk.Now().UTC()}
			var ok bool
			var err error
			rev, ok, err = putUnmoved(ctx, w.cfg.Client, key, meta.Encode(st), sess.Lease(), rev)
			if err == nil && !ok { // the key moved since (its lease expired, an earlier put landed): put at its revision now
				rev, ok, err = putUnmoved(ctx, w.cfg.Client, key, meta.Encode(st), sess.Lease(), rev)
			}
			if err == nil && ok {
				written, writtenLease = c, sess.Lease()
			}
		}
		wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := r.WaitCommitted(wctx, c+1)
		cancel()
		if err != nil && r.Err() != nil {
			return
		}
		w.sleep(ctx, w.cfg.StatusInterval)
	}
}

// putUnmoved puts value at key under lease if the key's mod revision is
// still rev (0: the key does not exist), the revision the caller last
// saw. It returns the key's mod revision after the call and whether it
// wrote. A put that fails with an unknown outcome (a request that timed
// out around a leader change) may still be applied by etcd much later;
// as a plain put it would then overwrite what the caller wrote since and
// make the published status go back. Guarded by the revision, it finds
// the key moved on and changes nothing. When the key moved for another
// reason (its lease expired, a put of unknown outcome landed), the
// caller learns its revision and may put again at it.
func putUnmoved(ctx context.Context, cli *clientv3.Client, key, value string, lease clientv3.LeaseID, rev int64) (int64, bool, error) {
	resp, err := cli.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(key), "=", rev)).
		Then(clientv3.OpPut(key, value, clientv3.WithLease(lease))).
		Else(clientv3.OpGet(key)).Commit()
	if err != nil {
		return rev, false, err
	}
	if resp.Succeeded {
		return resp.Header.Revision, true, nil
	}
	if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
		return kvs[0].ModRevision, false, nil
	}
	return 0, false, nil
}

// reportErrors publishes the topology's last reported errors under the
// worker's lease whenever new ones appear, until ctx is done.
func (w *worker) reportErrors(ctx context.Context, r *trident.Running) {
	key := w.keys.ErrorReport(w.cfg.Topology.Name, w.cfg.Slot)
	var written time.Time
	var writtenLease clientv3.LeaseID
	for ctx.Err() == nil {
		w.mu.Lock()
		sess := w.sess
		w.mu.Unlock()
		errs := r.Errors()
		if sess != nil && len(errs) > 0 && (!errs[len(errs)-1].Time.Equal(written) || sess.Lease() != writtenLease) {
			rec := meta.WorkerErrors{Topology: w.cfg.Topology.Name, Slot: w.cfg.Slot, PID: os.Getpid()}
			for _, e := range errs[max(0, len(errs)-meta.MaxErrorReports):] {
				rec.Errors = append(rec.Errors, meta.ErrorReport{Time: e.Time.UTC(), Component: e.Component, Task: int(e.Task),
					Error: e.Err.Error()})
			}
			if _, err := w.cfg.Client.Put(ctx, key, meta.Encode(rec), clientv3.WithLease(sess.Lease())); err == nil {
				written, writtenLease = errs[len(errs)-1].Time, sess.Lease()
			}
		}
		w.sleep(ctx, w.cfg.ErrorInterval)
	}
}

// sleep waits d on the worker's clock, or until ctx is done.
func (w *worker) sleep(ctx context.Context, d time.Duration) {
	t := w.clk.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C():
	}
}
