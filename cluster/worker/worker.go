// Package worker runs one topology in a worker process, as a supervisor
// started it: it builds the topology from the program's registry, runs it
// with trident's Submit (the local runtime, inside this process), and
// reports to etcd.
//
// A worker holds its own lease (workers/<topology>/<supervisor>/<port>):
// while it lives, the leader keeps its slot even if its supervisor is
// gone, so a supervisor's death has no effect on running workers. It
// writes status/<topology> (the last committed txid, its owner generation)
// under the same lease, watches its topology's assignment (a status change
// activates or deactivates its sources; losing its slot stops it), and
// exits with a code its supervisor reads (meta.ExitStopped,
// meta.ExitSuperseded, 1 for a failure).
//
// Exactly-once across workers rests on the coordination store, which must
// be shared by every worker that may run the topology and fenced: Submit
// acquires a new owner generation, so a worker started elsewhere after a
// node was declared dead supersedes an old one still running behind a
// partition; the old one's writes are rejected, its topology halts with
// trident.ErrSuperseded, and it exits with meta.ExitSuperseded.
package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/squallstream/squall/cluster/leader"
	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/internal/backoff"
	"github.com/squallstream/squall/internal/clock"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/trident"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/coordstore/boltstore"
	"github.com/squallstream/squall/trident/coordstore/etcdstore"
)

// Topology is one topology of a program's registry: its name and how to
// build it. Build runs in every worker of the topology (and nowhere else),
// so it must build the same topology each time.
type Topology struct {
	Name string
	// Build returns the topology and its configuration. Config.Store is
	// the coordination store: nil means the cluster's own etcd
	// (trident/coordstore/etcdstore, under the cluster's prefix), shared
	// by every machine and fenced, or under dev a bbolt store in the data
	// directory. A Store given here must be shared and fenced too (for
	// example cassandrastore). A Store that is an io.Closer is closed
	// when the worker stops.
	Build func(Env) (*trident.Topology, trident.Config, error)
}

// Env is what Build learns about where it runs.
type Env struct {
	Dev      bool      // running under `dev`: one machine, embedded etcd
	DataDir  string    // this worker's directory (its slot's)
	StoreDir string    // dev: where the default stores live (shared by the dev cluster's workers)
	Slot     meta.Slot // where the worker runs
	Logger   *slog.Logger

	closers *[]io.Closer // CloseAtStop's list; nil outside a worker
}

// CloseAtStop has the worker close c when it stops, once its topology has
// stopped (or failed to start): the sessions, clients and spouts Build
// opened. Closers run in the reverse order of registration. Outside a
// worker (an Env made by hand) it does nothing.
func (e Env) CloseAtStop(c io.Closer) {
	if e.closers != nil && c != nil {
		*e.closers = append(*e.closers, c)
	}
}

// Defaults of the zero Config.
const (
	DefaultTTL            = 10 * time.Second
	DefaultStatusInterval = 250 * time.Millisecond
	DefaultStopTimeout    = 10 * time.Second
)

// Config of a worker run.
type Config struct {
	Client   *clientv3.Client // required
	Prefix   string
	Topology Topology // required
	Slot     meta.Slot
	DataDir  string
	StoreDir string
	Dev      bool
	// TTL of the worker's lease: the worker is considered gone that long
	// after it stopped renewing it.
	TTL time.Duration
	// StatusInterval: the least time between two status writes.
	StatusInterval time.Duration
	// StopTimeout bounds the draining of batches in flight at a stop.
	StopTimeout time.Duration
	Clock       clock.Clock
	Logger      *slog.Logger
}

type worker struct {
	cfg  Config
	keys meta.Layout
	log  *slog.Logger
	clk  clock.Clock

	mu   sync.Mutex
	sess *concurrency.Session
}

// Run runs the worker until ctx is done (a stop), its slot leaves the
// assignment, or its topology halts. It returns the process's exit code
// and, for a failure, the error.
func Run(ctx context.Context, cfg Config) (int, error) {
	if cfg.Client == nil || cfg.Topology.Build == nil {
		return 1, errors.New("worker: Config.Client and Config.Topology.Build are required")
	}
	cfg.TTL = or(cfg.TTL, DefaultTTL)
	cfg.StatusInterval = or(cfg.StatusInterval, DefaultStatusInterval)
	cfg.StopTimeout = or(cfg.StopTimeout, DefaultStopTimeout)
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	w := &worker{cfg: cfg, keys: meta.New(cfg.Prefix), clk: clock.Or(cfg.Clock),
		log: cfg.Logger.With("topology", cfg.Topology.Name, "slot", cfg.Slot.String())}
	return w.run(ctx)
}

func or[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

func (w *worker) run(ctx context.Context) (int, error) {
	name := w.cfg.Topology.Name
	a, err := w.assignment(ctx)
	if err != nil {
		return 1, err
	}
	if a == nil || !a.Has(w.cfg.Slot) {
		w.log.Info("worker: the slot is not assigned this topology (any more); exiting")
		return meta.ExitStopped, nil
	}

	var closers []io.Closer // closed in reverse order when the worker stops
	defer func() {
		for _, c := range slices.Backward(closers) {
			if err := c.Close(); err != nil {
				w.log.Warn("worker: closing", "err", err)
			}
		}
	}()
	tt, tcfg, err := w.cfg.Topology.Build(Env{Dev: w.cfg.Dev, DataDir: w.cfg.DataDir, StoreDir: w.cfg.StoreDir,
		Slot: w.cfg.Slot, Logger: w.cfg.Logger, closers: &closers})
	if err != nil {
		return 1, fmt.Errorf("worker: building topology %s: %w", name, err)
	}
	if tcfg.Store == nil {
		st, err := w.defaultStore(ctx)
		if err != nil {
			return 1, err
		}
		tcfg.Store = st
	}
	if c, ok := tcfg.Store.(io.Closer); ok {
		closers = append(closers, c)
	}

	// The lease: the worker's liveness, under its key and its status.
	regCtx, stopReg := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stopReg()
	info := meta.Encode(meta.WorkerInfo{Topology: name, Slot: w.cfg.Slot, PID: os.Getpid(), Artifact: a.Artifact,
		Started: w.clk.Now().UTC()})
	wg.Add(1)
	go func() { defer wg.Done(); w.register(regCtx, info) }()

	tcfg.Topology.StartInactive = a.Status == meta.Inactive
	r, err := tt.Submit(ctx, tcfg)
	if err != nil {
		if ctx.Err() != nil {
			return meta.ExitStopped, nil
		}
		return 1, fmt.Errorf("worker: submitting topology %s: %w", name, err)
	}
	w.log.Info("worker: running", "generation", r.Generation(), "status", a.Status)
	stop := func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.cfg.StopTimeout)
		defer cancel()
		if err := r.Stop(sctx); err != nil {
			w.log.Warn("worker: stopping the topology", "err", err)
		}
	}

	statusCtx, stopStatus := context.WithCancel(ctx)
	defer stopStatus()
	wg.Add(1)
	go func() { defer wg.Done(); w.writeStatus(statusCtx, r) }()

	changes := make(chan *meta.Assignment, 1)
	wg.Add(1)
	go func() { defer wg.Done(); w.watchAssignment(statusCtx, changes) }()
	active := a.Status != meta.Inactive
	for {
		select {
		case <-ctx.Done():
			w.log.Info("worker: stopping")
			stopStatus()
			stop()
			return meta.ExitStopped, nil
		case <-r.Halted():
			stopStatus()
			herr := r.Err()
			stop()
			if errors.Is(herr, trident.ErrSuperseded) {
				w.log.Warn("worker: superseded by a newer worker of the topology; exiting", "err", herr)
				return meta.ExitSuperseded, nil
			}
			return 1, fmt.Errorf("worker: topology %s halted: %w", name, herr)
		case a := <-changes:
			if a == nil || !a.Has(w.cfg.Slot) {
				w.log.Info("worker: the slot left the assignment; stopping")
				stopStatus()
				stop()
				return meta.ExitStopped, nil
			}
			if want := a.Status != meta.Inactive; want != active {
				active = want
				if active {
					r.Activate()
				} else {
					r.Deactivate()
				}
				w.log.Info("worker: status changed", "status", a.Status)
			}
		}
	}
}

// defaultStore opens the coordination store of a topology that names
// none: under dev a bbolt store in the data directory, otherwise the
// cluster's etcd (the store does not close the worker's client).
func (w *worker) defaultStore(ctx context.Context) (coordstore.Store, error) {
	if w.cfg.Dev {
		return w.openDevStore(ctx)
	}
	st, err := etcdstore.New(w.cfg.Client, w.keys.Coordination(), etcdstore.Options{})
	if err != nil {
		return nil, fmt.Errorf("worker: the coordination store on etcd: %w", err)
	}
	return st, nil
}

// openDevStore opens the dev mode's bbolt store, waiting while a worker
// that is stopping still holds its lock.
func (w *worker) openDevStore(ctx context.Context) (*boltstore.Store, error) {
	dir := or(w.cfg.StoreDir, w.cfg.DataDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, w.cfg.Topology.Name+".coord.bolt")
	waits := backoff.Sequence{Backoff: backoff.Exponential(int64(100*time.Millisecond), int64(2*time.Second))}
	for {
		st, err := boltstore.Open(ctx, path, boltstore.Options{})
		if err == nil || ctx.Err() != nil {
			return st, err
		}
		w.log.Info("worker: the dev store is not available yet; retrying", "path", path, "err", err)
		t := w.clk.NewTimer(time.Duration(waits.Next()))
		select {
		case <-ctx.Done():
		case <-t.C():
		}
		t.Stop()
	}
}

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
		t := w.clk.NewTimer(time.Duration(waits.Next()))
		select {
		case <-ctx.Done():
		case <-t.C():
		}
		t.Stop()
	}
}

func (w *worker) readAssignment(ctx context.Context) (*meta.Assignment, int64, error) {
	key := w.keys.Assignment(w.cfg.Topology.Name)
	resp, err := w.cfg.Client.Get(ctx, key)
	if err != nil {
		return nil, 0, err
	}
	if len(resp.Kvs) == 0 {
		return nil, resp.Header.Revision, nil
	}
	var a meta.Assignment
	if err := meta.Decode(key, resp.Kvs[0].Value, &a); err != nil {
		return nil, 0, err
	}
	return &a, resp.Header.Revision, nil
}

// watchAssignment sends the assignment after each change of it. While etcd
// is unreachable it sends nothing: the worker runs on.
func (w *worker) watchAssignment(ctx context.Context, out chan<- *meta.Assignment) {
	key := w.keys.Assignment(w.cfg.Topology.Name)
	for ctx.Err() == nil {
		a, rev, err := w.readAssignment(ctx)
		if err != nil {
			t := w.clk.NewTimer(time.Second)
			select {
			case <-ctx.Done():
			case <-t.C():
			}
			t.Stop()
			continue
		}
		select {
		case out <- a:
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
				t := w.clk.NewTimer(d)
				select {
				case <-ctx.Done():
				case <-t.C():
				}
				t.Stop()
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
	var written state.TxID
	var writtenLease clientv3.LeaseID
	for ctx.Err() == nil {
		w.mu.Lock()
		sess := w.sess
		w.mu.Unlock()
		c := r.Committed()
		if sess != nil && (c != written || sess.Lease() != writtenLease) {
			st := meta.Status{Topology: w.cfg.Topology.Name, Slot: w.cfg.Slot, PID: os.Getpid(),
				Generation: uint64(r.Generation()), Committed: uint64(c), Time: w.clk.Now().UTC()}
			if _, err := w.cfg.Client.Put(ctx, key, meta.Encode(st), clientv3.WithLease(sess.Lease())); err == nil {
				written, writtenLease = c, sess.Lease()
			}
		}
		wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := r.WaitCommitted(wctx, c+1)
		cancel()
		if err != nil && r.Err() != nil {
			return
		}
		t := w.clk.NewTimer(w.cfg.StatusInterval)
		select {
		case <-ctx.Done():
		case <-t.C():
		}
		t.Stop()
	}
}
