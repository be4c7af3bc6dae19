package worker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/cluster/pki"
	"github.com/squallstream/squall/internal/backoff"
	"github.com/squallstream/squall/trident"
	"github.com/squallstream/squall/trident/coordstore"
)

// generation returns the owner generation the worker runs under. The
// worker of share 0 acquires a new one (with acquire) at every start, so
// that it fences any other process still running the master, and records
// it for the epoch; the others wait for the epoch's record. It returns
// errReassigned when a newer epoch has begun.
func (w *worker) generation(ctx context.Context, a *meta.Assignment, share int, plan string, acquire func() (uint64, error)) (uint64, error) {
	key := w.keys.Generation(w.cfg.Topology.Name)
	waits := backoff.Sequence{Backoff: backoff.Exponential(int64(100*time.Millisecond), int64(2*time.Second))}
	for ctx.Err() == nil {
		rec, modRev, rev, err := readRecord[meta.Generation](ctx, w.cfg.Client, key)
		if err == nil {
			if rec == nil {
				rec = &meta.Generation{}
			}
			switch {
			case rec.Epoch > a.Epoch:
				return 0, errReassigned
			case share == trident.MasterShare:
				var gen uint64
				if gen, err = acquire(); err != nil {
					return 0, err
				}
				next := meta.Generation{Topology: w.cfg.Topology.Name, Epoch: a.Epoch, Generation: gen, Plan: plan}
				var resp *clientv3.TxnResponse
				resp, err = w.cfg.Client.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(key), "=", modRev)).
					Then(clientv3.OpPut(key, meta.Encode(next))).Commit()
				if err == nil && resp.Succeeded {
					w.log.Info("worker: acquired the owner generation", "generation", gen)
					return gen, nil
				}
				if err == nil {
					continue // a newer record was written meanwhile: read it
				}
			case rec.Epoch == a.Epoch && rec.Plan != plan:
				return 0, fmt.Errorf("worker: share %d built another topology than share 0 (plan %.12s, not %.12s): "+
					"every worker must build the same topology (same code, same configuration)", share, plan, rec.Plan)
			case rec.Epoch == a.Epoch:
				return rec.Generation, nil
			default:
				err = w.awaitChange(ctx, key, rev, a.Epoch)
				if err == nil {
					continue
				}
				if errors.Is(err, errReassigned) {
					return 0, err
				}
			}
		}
		if ctx.Err() != nil {
			break
		}
		d := time.Duration(waits.Next())
		w.log.Warn("worker: reading the owner generation failed; retrying", "err", err, "in", d)
		w.sleep(ctx, d)
	}
	return 0, ctx.Err()
}

// awaitChange waits after revision rev for a change of the generation
// record (nil) or for the assignment to leave epoch (errReassigned).
func (w *worker) awaitChange(ctx context.Context, key string, rev, epoch int64) error {
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	gens := w.cfg.Client.Watch(wctx, key, clientv3.WithRev(rev+1))
	assignments := w.cfg.Client.Watch(wctx, w.keys.Assignment(w.cfg.Topology.Name), clientv3.WithRev(rev+1))
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case resp, ok := <-gens:
			if !ok || resp.Err() != nil {
				return fmt.Errorf("worker: watching the owner generation: %v", resp.Err())
			}
			return nil
		case resp, ok := <-assignments:
			if !ok || resp.Err() != nil {
				return fmt.Errorf("worker: watching the assignment: %v", resp.Err())
			}
			a, _, err := w.readAssignment(ctx)
			if err != nil {
				return err
			}
			if a == nil || a.Epoch != epoch || !a.Has(w.cfg.Slot) {
				return errReassigned
			}
		}
	}
}

// share describes the worker's share of the assignment: its peers are
// named by their slots, which the transport's dialer resolves to the
// addresses they registered.
func (w *worker) share(a *meta.Assignment, index int, gen uint64, ln net.Listener) trident.Share {
	s := trident.Share{Run: fmt.Sprintf("%s@%d", w.cfg.Topology.Name, a.Epoch), Index: index, Count: len(a.Workers),
		Generation: coordstore.Generation(gen), Peers: map[int]string{}, Listener: ln}
	for i, p := range a.Workers {
		if i != index {
			s.Peers[i] = p.Slot.Supervisor + "/" + fmt.Sprint(p.Slot.Port)
		}
	}
	var d net.Dialer
	s.Client.Dial = func(ctx context.Context, slot string) (net.Conn, error) {
		addr, err := w.peerAddr(ctx, slot, a.Epoch)
		if err != nil {
			return nil, err
		}
		return d.DialContext(ctx, "tcp", addr)
	}
	s.Client.Logger = w.cfg.Logger
	s.Server.Logger = w.cfg.Logger
	if b := w.cfg.Bundle; b != nil {
		// Mutual TLS with the workers of this topology and epoch only:
		// every other certificate is refused before anything is read.
		want := pki.WorkerName(w.cfg.Topology.Name, a.Epoch)
		s.Server.TLS, s.Client.TLS = b.PeerTLS(func(id pki.Identity) error {
			if id.Role != pki.Worker || id.Name != want {
				return fmt.Errorf("%w: %s is not a worker of %s", pki.ErrUntrusted, id, want)
			}
			return nil
		})
	}
	return s
}

// peerAddr looks up where the worker of slot ("<supervisor>/<port>")
// listens in epoch.
func (w *worker) peerAddr(ctx context.Context, slotKey string, epoch int64) (string, error) {
	slot, err := meta.ParseSlotKey(slotKey)
	if err != nil {
		return "", err
	}
	key := w.keys.Worker(w.cfg.Topology.Name, slot)
	resp, err := w.cfg.Client.Get(ctx, key)
	if err != nil {
		return "", fmt.Errorf("worker: looking up the worker of slot %s: %w", slot, err)
	}
	if len(resp.Kvs) == 0 {
		return "", fmt.Errorf("worker: the worker of slot %s is not registered (yet)", slot)
	}
	var info meta.WorkerInfo
	if err := meta.Decode(key, resp.Kvs[0].Value, &info); err != nil {
		return "", err
	}
	if info.Epoch != epoch || info.Addr == "" {
		return "", fmt.Errorf("worker: the worker of slot %s runs epoch %d, not %d (yet)", slot, info.Epoch, epoch)
	}
	return info.Addr, nil
}
