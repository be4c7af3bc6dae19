// Package worker runs one worker process of a topology, as a supervisor
// started it: it builds the topology from the program's registry, runs its
// share of it (trident.Topology.RunShare) and reports to etcd.
//
// The leader assigns a topology a list of slots; the worker in the i-th
// slot of the list runs share i of the topology, and the shares place the
// executors of the generated topology on themselves by a fixed rule, so
// the leader need not know the topology's executors (its code runs in
// workers only). Share 0 runs the master coordinator. The workers of a
// topology dial each other's transport servers at the addresses they
// register (workers/<topology>/<supervisor>/<port>), so a worker that
// restarts on a new port is found again.
//
// Epochs and generations: an assignment has an epoch, which grows when
// the topology's slots or artifact change. The worker of share 0 acquires
// an owner generation from the coordination store once per epoch and
// records it (generations/<topology>); the other workers run under the
// same one, and a restart within the epoch reuses it. A worker of an
// older epoch — one behind a partition, say, whose node was declared dead
// — is fenced: its writes are rejected, its topology halts with
// trident.ErrSuperseded and it exits with meta.ExitSuperseded. A worker
// that sees its epoch end exits with meta.ExitReassigned and its
// supervisor starts the new epoch's worker.
//
// A worker holds its own lease: while it lives, the leader keeps its slot
// even if its supervisor is gone, so a supervisor's death has no effect
// on running workers. The worker of share 0 writes status/<topology> (the
// last committed txid, its owner generation) under the same lease. A
// status change of the assignment activates or deactivates the sources;
// losing its slot stops the worker. It exits with a code its supervisor
// reads (meta.ExitStopped, meta.ExitSuperseded, meta.ExitReassigned, 1 for
// a failure).
package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/cluster/pki"
	"github.com/squallstream/squall/internal/clock"
	"github.com/squallstream/squall/monitor"
	"github.com/squallstream/squall/trident"
	"github.com/squallstream/squall/trident/coordstore/etcdstore"
)

// Topology is one topology of a program's registry: its name and how to
// build it. Build runs in every worker of the topology, and once more at
// submit, on the client, to plan (Env.Planning); it must build the same
// topology each time.
type Topology struct {
	Name string
	// Build returns the topology and its configuration. When Env.Planning
	// is set, Build runs at submit, on the client, only so that the
	// command can compute what the topology needs of the supervisors
	// (trident.Topology.Demand, from the CPULoad and MemoryLoad its
	// streams declare): nothing will run, so it must open no connection
	// (no session, client or spout that dials) and need no service; it
	// must still declare the same streams, parallelism and loads, with
	// stand-ins for what it would open. An error then fails the submit.
	// Config.Store is
	// the coordination store: nil means the cluster's own etcd
	// (trident/coordstore/etcdstore, under the cluster's prefix), shared
	// by every machine and fenced. A Store given here must be shared by
	// every worker and fenced too (for example cassandrastore). A Store
	// that is an io.Closer is closed when the worker stops.
	Build func(Env) (*trident.Topology, trident.Config, error)
}

// Env is what Build learns about where it runs.
type Env struct {
	Dev     bool      // running under `dev`: one machine, embedded etcd
	DataDir string    // this worker's directory (its slot's); "" when Planning
	Slot    meta.Slot // where the worker runs; zero when Planning
	Share   int       // the worker's share of the topology, 0 to Shares-1; 0 runs the master coordinator
	Shares  int       // the topology's workers in this epoch (when Planning: the workers asked for)
	// Planning says Build runs at submit, on the client, to compute the
	// topology's demand (trident.Topology.Demand); nothing will run:
	// open no connections. See Topology.Build.
	Planning bool
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
	DefaultListen         = "127.0.0.1:0"
	DefaultErrorInterval  = time.Second
)

// Config of a worker run.
type Config struct {
	Client   *clientv3.Client // required
	Prefix   string
	Topology Topology // required
	Slot     meta.Slot
	DataDir  string
	Dev      bool
	// Listen is the address of the worker's transport server, where the
	// other workers of its topology reach it; zero means DefaultListen.
	Listen string
	// HTTP, if set, is the address of the worker's monitor (package
	// monitor: its share's figures, metrics, logs), read-only: actions go
	// through the nimbus. Off loopback it needs MonitorToken.
	HTTP         string
	MonitorToken string
	// LogFile is the worker's JSON log file, for the monitor's log viewer.
	LogFile string
	// TTL of the worker's lease: the worker is considered gone that long
	// after it stopped renewing it.
	TTL time.Duration
	// StatusInterval: the least time between two status writes.
	StatusInterval time.Duration
	// ErrorInterval: how often the worker looks for new reported errors
	// to publish (errors/<topology>/<supervisor>/<port>).
	ErrorInterval time.Duration
	// StopTimeout bounds the draining of batches in flight at a stop.
	StopTimeout time.Duration
	// Bundle is the worker's certificate, issued by its supervisor for
	// its topology and epoch (pki.WorkerName), with the cluster CA. With
	// it the worker runs only an assignment a nimbus signed and for the
	// epoch its certificate names, and talks to the other workers of its
	// topology over mutual TLS, refusing anyone else.
	Bundle *pki.Bundle
	Clock  clock.Clock
	Logger *slog.Logger
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
// assignment, its epoch ends, or its topology halts. It returns the
// process's exit code and, for a failure, the error.
func Run(ctx context.Context, cfg Config) (int, error) {
	if err := cfg.Validate(); err != nil {
		return 1, err
	}
	cfg = cfg.withDefaults()
	w := &worker{cfg: cfg, keys: meta.New(cfg.Prefix), clk: clock.Or(cfg.Clock),
		log: cfg.Logger.With("topology", cfg.Topology.Name, "slot", cfg.Slot.String())}
	return w.run(ctx)
}

// errReassigned ends a worker whose epoch ended before it ran.
var errReassigned = errors.New("worker: the topology was reassigned")

func (w *worker) run(ctx context.Context) (int, error) {
	name := w.cfg.Topology.Name
	a, err := w.assignment(ctx)
	if err != nil {
		return 1, err
	}
	share := -1
	if a != nil {
		share = a.Share(w.cfg.Slot)
	}
	if share < 0 {
		w.log.Info("worker: the slot is not assigned this topology (any more); exiting")
		return meta.ExitStopped, nil
	}
	w.log = w.log.With("epoch", a.Epoch, "share", share)
	if code, err := w.checkCredentials(a); code >= 0 {
		return code, err
	}

	var closers []io.Closer // closed in reverse order when the worker stops
	defer func() {
		for _, c := range slices.Backward(closers) {
			if err := c.Close(); err != nil {
				w.log.Warn("worker: closing", "err", err)
			}
		}
	}()
	tt, tcfg, err := w.cfg.Topology.Build(Env{Dev: w.cfg.Dev, DataDir: w.cfg.DataDir, Slot: w.cfg.Slot,
		Share: share, Shares: len(a.Workers), Logger: w.cfg.Logger, closers: &closers})
	if err != nil {
		return 1, fmt.Errorf("worker: building topology %s: %w", name, err)
	}
	// A restarted worker must find its state again: memory state is
	// refused unless the topology says it accepts losing it.
	tcfg.RequireDurableState = true
	if tcfg.Topology.Logger == nil {
		// The topology logs where the worker does unless Build chose
		// otherwise: in a cluster nothing else would show its records.
		tcfg.Topology.Logger = w.cfg.Logger
	}
	if tcfg.Store == nil {
		st, err := etcdstore.New(w.cfg.Client, w.keys.Coordination(), etcdstore.Options{})
		if err != nil {
			return 1, fmt.Errorf("worker: the coordination store on etcd: %w", err)
		}
		tcfg.Store = st
	}
	if c, ok := tcfg.Store.(io.Closer); ok {
		closers = append(closers, c)
	}
	ln, err := net.Listen("tcp", w.cfg.Listen)
	if err != nil {
		return 1, fmt.Errorf("worker: listening for the topology's other workers: %w", err)
	}
	closers = append(closers, closeQuietly{ln})
	var mon *monitor.Registry
	var monURL string
	if w.cfg.HTTP != "" {
		mon = monitor.NewRegistry()
		mcfg := monitor.Config{Addr: w.cfg.HTTP, Token: w.cfg.MonitorToken, ReadOnly: true, LogFile: w.cfg.LogFile, Logger: w.log}
		if b := w.cfg.Bundle; b != nil {
			mcfg.TLS, mcfg.Authenticator = b.ServerTLS(false), pki.HTTPAuthenticator()
		}
		srv, err := monitor.Start(mon, mcfg)
		if err != nil {
			return 1, fmt.Errorf("worker: the monitor: %w", err)
		}
		closers = append(closers, closeMonitor{srv})
		monURL = srv.URL()
	}

	// The lease: the worker's liveness, under its key and its status.
	regCtx, stopReg := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stopReg()
	info := meta.Encode(meta.WorkerInfo{Topology: name, Slot: w.cfg.Slot, PID: os.Getpid(), Artifact: a.Artifact,
		Epoch: a.Epoch, Addr: ln.Addr().String(), MonitorURL: monURL, Started: w.clk.Now().UTC()})
	wg.Add(1)
	go func() { defer wg.Done(); w.register(regCtx, info) }()

	plan, err := tt.PlanDigest(tcfg)
	if err != nil {
		return 1, fmt.Errorf("worker: planning topology %s: %w", name, err)
	}
	gen, err := w.generation(ctx, a, share, plan, func() (uint64, error) {
		g, err := tt.Acquire(ctx, tcfg)
		return uint64(g), err
	})
	switch {
	case errors.Is(err, errReassigned):
		w.log.Info("worker: the topology was reassigned before this worker ran; exiting")
		return meta.ExitReassigned, nil
	case err != nil && ctx.Err() != nil:
		return meta.ExitStopped, nil
	case err != nil:
		return 1, err
	}
	tcfg.Topology.StartInactive = a.Status == meta.Inactive
	r, err := tt.RunShare(tcfg, w.share(a, share, gen, ln))
	if err != nil {
		return 1, fmt.Errorf("worker: running share %d of topology %s: %w", share, name, err)
	}
	if mon != nil {
		if err := mon.Add(r, monitor.Options{}); err != nil {
			w.log.Warn("worker: the monitor does not show the topology", "err", err)
		}
	}
	w.log.Info("worker: running", "generation", gen, "status", a.Status, "addr", ln.Addr().String(), "monitor", monURL)
	return w.serve(ctx, r, a, share == trident.MasterShare, gen, &wg)
}

// serve runs until the worker must stop, and stops the share.
func (w *worker) serve(ctx context.Context, r *trident.Running, a *meta.Assignment, master bool, gen uint64, wg *sync.WaitGroup) (int, error) {
	stop := func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.cfg.StopTimeout)
		defer cancel()
		if err := r.Stop(sctx); err != nil {
			w.log.Warn("worker: stopping the topology", "err", err)
		}
	}
	// abandon stops without draining: once the topology was placed anew
	// or another worker owns it, the batches in flight can only fail (the
	// new owner generation fences them, and their trees may wait on a
	// worker that is gone), so waiting for them only delays the new
	// epoch's start.
	abandon := func() {
		sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		cancel()
		if err := r.Stop(sctx); err != nil && !errors.Is(err, context.Canceled) {
			w.log.Warn("worker: stopping the topology", "err", err)
		}
	}
	statusCtx, stopStatus := context.WithCancel(ctx)
	defer stopStatus()
	if master {
		wg.Add(1)
		go func() { defer wg.Done(); w.writeStatus(statusCtx, r) }()
	}
	wg.Add(1)
	go func() { defer wg.Done(); w.reportErrors(statusCtx, r) }()
	changes := make(chan *meta.Assignment, 1)
	gens := make(chan *meta.Generation, 1)
	wg.Add(2)
	go func() { defer wg.Done(); watchRecord(statusCtx, w, w.keys.Assignment(w.cfg.Topology.Name), changes) }()
	go func() { defer wg.Done(); watchRecord(statusCtx, w, w.keys.Generation(w.cfg.Topology.Name), gens) }()
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
			return 1, fmt.Errorf("worker: topology %s halted: %w", w.cfg.Topology.Name, herr)
		case rec := <-gens:
			if rec == nil || (rec.Epoch == a.Epoch && rec.Generation == gen) {
				continue
			}
			stopStatus()
			abandon()
			if master && rec.Epoch == a.Epoch {
				w.log.Warn("worker: another worker took the master's share over; exiting", "generation", rec.Generation)
				return meta.ExitSuperseded, nil
			}
			w.log.Info("worker: the topology's owner generation changed; starting again", "generation", rec.Generation,
				"epoch", rec.Epoch)
			return meta.ExitReassigned, nil
		case next := <-changes:
			if next == nil || !next.Has(w.cfg.Slot) {
				w.log.Info("worker: the slot left the assignment; stopping")
				stopStatus()
				stop()
				return meta.ExitStopped, nil
			}
			if next.Epoch != a.Epoch {
				w.log.Info("worker: the topology was reassigned; stopping this epoch's worker", "next_epoch", next.Epoch)
				stopStatus()
				abandon()
				return meta.ExitReassigned, nil
			}
			if want := next.Status != meta.Inactive; want != active {
				active = want
				if active {
					r.Activate()
				} else {
					r.Deactivate()
				}
				w.log.Info("worker: status changed", "status", next.Status)
			}
		}
	}
}

// closeMonitor stops the worker's monitor.
type closeMonitor struct{ s *monitor.Server }

func (c closeMonitor) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return c.s.Close(ctx)
}

// closeQuietly closes a listener that RunShare may have closed already.
type closeQuietly struct{ ln net.Listener }

func (c closeQuietly) Close() error {
	if err := c.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}
