// Package supervisor runs the worker processes of one machine's slots, as
// the cluster's assignments say.
//
// A Supervisor registers under a lease (supervisors/<id>, its heartbeat:
// the leader nimbus treats its expiry as the node's death), watches the
// assignments, and for each of its slots assigned a worker:
//
//   - downloads the topology's artifact from any nimbus holding it (the
//     codestore HTTP endpoint), checks its sha256, and keeps it in
//     <DataDir>/artifacts, named by the digest: workers of two versions of
//     a topology run side by side from their own files;
//   - starts `<artifact> worker --topology T --supervisor ID --port P
//     --data-dir D` in its own process group, under Config.Isolation
//     (isolate.go), its output appended to
//     <DataDir>/workers/<port>/worker.log; its pid file goes to
//     <DataDir>/pids (RecordsDir), out of the slot's directory, which is
//     the worker's;
//   - restarts a worker that exits with exponential backoff
//     (internal/backoff, from RestartBackoff to MaxRestartBackoff); an exit
//     within MinUptime of the start, or a failure to fetch or start the
//     artifact, is a start failure; start failures in a row and crashes are
//     reported in crashes/<topology>/<id>/<port> (under the supervisor's
//     lease) for the leader, which moves a topology off a slot that keeps
//     failing. A worker that exits with meta.ExitSuperseded was taken over
//     by a newer worker of its topology, and one that exits with
//     meta.ExitReassigned stopped because its topology was placed anew
//     (it is started again after RestartBackoff): neither is a crash;
//   - stops a worker whose slot leaves the assignment, or whose artifact
//     changes: SIGTERM to its process group, SIGKILL after Grace; the
//     slot's next worker starts only once it has exited.
//
// What to do is decided by a pure core (plan.go, slotlife.go: actions
// from the assignments, the slots' runs, a slot's exits and a clock
// reading); supervisor.go and slotrun.go execute the actions.
//
// Workers outlive their supervisor: a supervisor that stops (unless
// Config.StopWorkersOnExit) or dies leaves them running, and a supervisor
// started again on the same DataDir adopts them from their pid files,
// after checking that each process is alive, started when the pid file
// says, runs the expected artifact and runs as the workers' user, rather
// than starting duplicates.
package supervisor

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/squallstream/squall/cluster/codestore"
	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/cluster/pki"
	"github.com/squallstream/squall/internal/backoff"
	"github.com/squallstream/squall/internal/clock"
)

// Defaults of the zero Config.
const (
	DefaultTTL               = 10 * time.Second
	DefaultGrace             = 10 * time.Second
	DefaultMinUptime         = 10 * time.Second
	DefaultRestartBackoff    = time.Second
	DefaultMaxRestartBackoff = 30 * time.Second
	DefaultPollInterval      = time.Second
	DefaultPruneAfter        = 10 * time.Minute
	DefaultMonitorPortOffset = 1000
)

// Config of a Supervisor.
type Config struct {
	Client  *clientv3.Client // required
	Prefix  string           // default meta.DefaultPrefix
	ID      string           // unique, stable across restarts (required)
	Ports   []int            // the slots (required)
	DataDir string           // artifacts, pid files and logs (required; made absolute)
	// Capacity is what the workers of this supervisor may use together
	// (CPU in percent of a core, memory in MB), published in its
	// registration for the scheduler; a zero CPU or memory is no limit.
	Capacity meta.Resources
	// TTL of the registration lease: the supervisor's heartbeat.
	TTL time.Duration
	// Grace is the wait between SIGTERM and SIGKILL when a worker stops.
	Grace time.Duration
	// MinUptime: a worker exiting sooner after its start failed to start.
	MinUptime time.Duration
	// RestartBackoff and MaxRestartBackoff bound the waits before a worker
	// is started again after an exit.
	RestartBackoff, MaxRestartBackoff time.Duration
	// PruneAfter: an artifact no slot runs or is assigned is removed at
	// the next change of the assignments that long after it was fetched.
	PruneAfter time.Duration
	// PollInterval: how often the liveness of an adopted worker is checked
	// (it is not this process's child, so its exit is not signalled).
	PollInterval time.Duration
	// WorkerArgs are appended to every worker's command line; WorkerEnv is
	// added to its environment (how it reaches etcd, say).
	WorkerArgs, WorkerEnv []string
	// WorkerHost is the host the workers listen on (their certificates
	// name it).
	WorkerHost string
	// FixedPorts has each slot's worker listen on fixed ports, so that
	// they can be firewalled (Storm's supervisor.slots.ports): its
	// transport on WorkerHost at the slot's port, its monitor at the
	// slot's port + MonitorPortOffset (default DefaultMonitorPortOffset).
	// Otherwise workers take free ports.
	FixedPorts        bool
	MonitorPortOffset int
	// StopWorkersOnExit stops the workers when Run returns (the dev
	// command); otherwise they keep running, to be adopted.
	StopWorkersOnExit bool
	HTTPClient        *http.Client // fetching artifacts; nil: a 5-minute timeout
	// Listener, if not nil, serves the workers' logs (GET /logs/{port},
	// see logHandler); its address is advertised in the supervisor's
	// registration. Run closes it.
	Listener net.Listener
	// Token, if set, is required of log requests (Authorization: Bearer).
	// A Listener off loopback needs one (or a Bundle).
	Token string
	// Bundle is this supervisor's certificate (role supervisor, an
	// intermediate CA) and the cluster CA. With it the supervisor runs
	// only assignments a nimbus of the cluster signed, fetches code only
	// from nimbuses over mutual TLS, issues each worker it starts a
	// certificate of its own (pki.WorkerName of the topology and epoch)
	// and serves the logs over HTTPS to cluster identities.
	Bundle *pki.Bundle
	// Isolation confines the workers: the user they run as, their
	// limits. The zero Isolation confines nothing.
	Isolation Isolation
	Clock     clock.Clock
	Logger    *slog.Logger
}

// Validate reports a Config that New would refuse.
func (c Config) Validate() error {
	switch {
	case c.Client == nil || c.DataDir == "":
		return errors.New("supervisor: Config.Client and DataDir are required")
	case c.Listener != nil && c.Token == "" && c.Bundle == nil && !loopback(c.Listener.Addr().String()):
		return fmt.Errorf("supervisor: a Token or a Bundle is required to serve the workers' logs on %s, off loopback", c.Listener.Addr())
	case len(c.Ports) == 0:
		return errors.New("supervisor: Config.Ports is empty: a supervisor needs at least one slot")
	case c.TTL < 0 || c.Grace < 0 || c.MinUptime < 0 || c.RestartBackoff < 0 || c.MaxRestartBackoff < 0 || c.PollInterval < 0 || c.PruneAfter < 0:
		return errors.New("supervisor: negative duration in Config")
	}
	if c.FixedPorts {
		if c.WorkerHost == "" {
			return errors.New("supervisor: FixedPorts needs a WorkerHost")
		}
		off := cmp.Or(c.MonitorPortOffset, DefaultMonitorPortOffset)
		for _, p := range c.Ports {
			if p+off > 65535 || p+off < 1 {
				return fmt.Errorf("supervisor: slot %d's monitor port %d (MonitorPortOffset %d) is out of range", p, p+off, off)
			}
		}
	}
	if err := meta.CheckName("supervisor", c.ID); err != nil {
		return fmt.Errorf("supervisor: %w", err)
	}
	if err := c.Isolation.Validate(); err != nil {
		return err
	}
	seen := map[int]bool{}
	for _, p := range c.Ports {
		if p <= 0 || seen[p] {
			return fmt.Errorf("supervisor: bad or repeated port %d in Config.Ports", p)
		}
		seen[p] = true
	}
	return nil
}

// Supervisor runs the workers of its slots while Run runs.
type Supervisor struct {
	cfg       Config
	keys      meta.Layout
	log       *slog.Logger
	clock     clock.Clock
	artifacts *codestore.Dir
	isolator  *isolator

	mu       sync.Mutex
	session  *concurrency.Session
	verified map[codestore.Digest]bool
	fetching map[codestore.Digest]*sync.Mutex
	epochs   map[string]int64      // topology → epoch of its signed assignment
	crashes  map[string]meta.Crash // key → the slot's last crash report, published again under a new lease

	refused atomic.Int64 // assignments refused (unsigned, badly signed)

	starts atomic.Int64 // workers started (not adopted), for tests
}

// New returns a Supervisor.
func New(cfg Config) (*Supervisor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.TTL = cmp.Or(cfg.TTL, DefaultTTL)
	cfg.Grace = cmp.Or(cfg.Grace, DefaultGrace)
	cfg.MinUptime = cmp.Or(cfg.MinUptime, DefaultMinUptime)
	cfg.RestartBackoff = cmp.Or(cfg.RestartBackoff, DefaultRestartBackoff)
	cfg.MaxRestartBackoff = cmp.Or(cfg.MaxRestartBackoff, DefaultMaxRestartBackoff)
	cfg.PollInterval = cmp.Or(cfg.PollInterval, DefaultPollInterval)
	cfg.PruneAfter = cmp.Or(cfg.PruneAfter, DefaultPruneAfter)
	if cfg.Bundle != nil {
		cfg.HTTPClient = &http.Client{Timeout: 30 * time.Minute, Transport: &http.Transport{TLSClientConfig: cfg.Bundle.ClientTLS(pki.Nimbus)}}
	} else if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 5 * time.Minute}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	// Workers run in their slot's directory: a relative DataDir would
	// make every path handed to them (their artifact's) wrong there.
	abs, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("supervisor: DataDir: %w", err)
	}
	cfg.DataDir = abs
	dir, err := codestore.OpenDir(filepath.Join(cfg.DataDir, "artifacts"))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(cfg.DataDir, "workers"), 0o700); err != nil {
		return nil, fmt.Errorf("supervisor: %w", err)
	}
	if err := supervisorDir(filepath.Join(cfg.DataDir, RecordsDir), 0o700, -1); err != nil {
		return nil, err
	}
	log := cfg.Logger.With("supervisor", cfg.ID)
	iso, err := newIsolator(cfg.Isolation, cfg.ID, cfg.DataDir, log)
	if err != nil {
		return nil, err
	}
	return &Supervisor{cfg: cfg, keys: meta.New(cfg.Prefix), log: log,
		clock: clock.Or(cfg.Clock), artifacts: dir, isolator: iso, verified: map[codestore.Digest]bool{},
		fetching: map[codestore.Digest]*sync.Mutex{}, epochs: map[string]int64{}}, nil
}

// Starts counts the workers this supervisor started (adoptions excluded).
func (s *Supervisor) Starts() int64 { return s.starts.Load() }

// slotRun owns one slot's worker for one work.
type slotRun struct {
	port     int
	work     work
	cancel   context.CancelFunc
	stop     atomic.Bool // on cancel: stop the worker (else leave it running)
	stopping bool        // asked to stop by reconcile (read and written by Run's goroutine only)
	done     chan struct{}
}

// Run registers and runs the assigned workers until ctx is done. It
// returns ctx's error.
func (s *Supervisor) Run(ctx context.Context) error {
	life, endLife := context.WithCancel(context.WithoutCancel(ctx))
	defer endLife()
	adopted := s.adoptAll(life)

	// Registered first: a second supervisor with this ID (a duplicate
	// --id) must start no worker.
	sess, err := s.claim(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	ctx, refuse := context.WithCancelCause(ctx)
	defer refuse(nil)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := s.keepRegistered(ctx, sess); err != nil {
			s.log.Error("supervisor: stopping", "err", err)
			refuse(err)
		}
	}()
	if s.cfg.Listener != nil {
		srv, err := s.logServer()
		if err != nil {
			return err
		}
		ln := s.cfg.Listener
		if srv.TLSConfig != nil {
			ln = tls.NewListener(ln, srv.TLSConfig)
		}
		wg.Add(1)
		go func() { defer wg.Done(); srv.Serve(ln) }()
		stop := context.AfterFunc(ctx, func() { srv.Close() })
		defer stop()
	}

	runs := map[int]*slotRun{}
	s.watchAssignments(ctx, func(desired map[int]work) {
		s.reconcile(ctx, life, runs, adopted, desired)
		s.pruneArtifacts(runs, adopted)
	})
	for _, r := range runs {
		r.cancel()
	}
	for _, r := range runs {
		<-r.done
	}
	if s.cfg.StopWorkersOnExit {
		for port, p := range adopted {
			s.log.Info("supervisor: stopping an unclaimed adopted worker", "port", port, "pid", p.rec.PID)
			terminate(p, s.clock, s.cfg.Grace)
			os.Remove(s.pidFile(port))
		}
	}
	wg.Wait()
	if err := context.Cause(ctx); !errors.Is(err, context.Canceled) {
		return err
	}
	return ctx.Err()
}

func (s *Supervisor) slotDir(port int) string {
	return filepath.Join(s.cfg.DataDir, "workers", strconv.Itoa(port))
}

// adoptAll finds the workers an earlier run of this supervisor left.
func (s *Supervisor) adoptAll(life context.Context) map[int]*proc {
	out := map[int]*proc{}
	for _, port := range s.cfg.Ports {
		rec, err := s.readSlotRecord(port)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err == nil {
			var p *proc
			if p, err = adopt(life, rec, s.workerUIDs(), s.clock, s.cfg.PollInterval); err == nil {
				s.log.Info("supervisor: adopted a running worker", "port", port, "pid", rec.PID, "topology", rec.Topology)
				out[port] = p
				continue
			}
		}
		s.log.Info("supervisor: a worker of an earlier run is gone", "port", port, "reason", err)
		os.Remove(s.pidFile(port))
	}
	return out
}

func (s *Supervisor) sleep(ctx context.Context, d time.Duration) {
	t := s.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C():
	}
}

// watchAssignments calls apply with this supervisor's slots' work after
// every change of the assignments, until ctx is done. While etcd cannot be
// read, nothing is applied: the workers run on.
func (s *Supervisor) watchAssignments(ctx context.Context, apply func(map[int]work)) {
	retry := backoff.Sequence{Backoff: backoff.Exponential(int64(100*time.Millisecond), int64(5*time.Second))}
	for ctx.Err() == nil {
		resp, err := s.cfg.Client.Get(ctx, s.keys.Assignments(), clientv3.WithPrefix())
		if err != nil {
			if ctx.Err() == nil {
				d := time.Duration(retry.Next())
				s.log.Warn("supervisor: reading the assignments failed; retrying", "err", err, "in", d)
				s.sleep(ctx, d)
			}
			continue
		}
		retry.Reset()
		recs := make([]assignmentRecord, len(resp.Kvs))
		for i, kv := range resp.Kvs {
			recs[i] = assignmentRecord{Key: string(kv.Key), Value: kv.Value}
		}
		got := planAssignments(recs, s.cfg.ID, s.cfg.Ports, s.trust())
		for _, err := range got.Skipped {
			s.log.Warn("supervisor: skipping an assignment", "err", err)
		}
		for _, r := range got.Refused {
			s.refused.Add(1)
			s.log.Error("supervisor: refusing an assignment no nimbus of the cluster signed", "key", r.Key, "err", r.Err)
		}
		s.mu.Lock()
		s.epochs = got.Epochs
		s.mu.Unlock()
		apply(got.Desired)
		wctx, cancel := context.WithCancel(ctx)
		wc := s.cfg.Client.Watch(clientv3.WithRequireLeader(wctx), s.keys.Assignments(), clientv3.WithPrefix(),
			clientv3.WithRev(resp.Header.Revision+1))
		select {
		case <-ctx.Done():
		case <-wc:
		}
		cancel()
	}
}

// reconcile makes the slot runs match desired: it executes the actions
// of planReconcile on what runs and adopted hold now.
func (s *Supervisor) reconcile(ctx, life context.Context, runs map[int]*slotRun, adopted map[int]*proc, desired map[int]work) {
	v := slotsView{Runs: map[int]runView{}, Adopted: map[int]work{}}
	for port, r := range runs {
		v.Runs[port] = runView{Work: r.work, Stopping: r.stopping, Done: isDone(r.done)}
	}
	for port, p := range adopted {
		v.Adopted[port] = work{Topology: p.rec.Topology, Artifact: p.rec.Artifact}
	}
	for _, a := range planReconcile(v, desired) {
		switch a.Kind {
		case actStopRun:
			r := runs[a.Port]
			if !a.Quiet {
				s.log.Info("supervisor: stopping a worker no longer assigned", "port", a.Port, "topology", r.work.Topology)
			}
			r.stopping = true
			r.stop.Store(true)
			r.cancel()
		case actStopAdopted:
			runs[a.Port] = s.stopAdopted(a.Port, adopted[a.Port])
			delete(adopted, a.Port)
		case actStartRun:
			rctx, cancel := context.WithCancel(ctx)
			r := &slotRun{port: a.Port, work: a.Work, cancel: cancel, done: make(chan struct{})}
			// Set before the run starts: when ctx ends, the run may see it
			// before Run does, and must already know whether to stop the
			// worker.
			r.stop.Store(s.cfg.StopWorkersOnExit)
			var wait <-chan struct{}
			if prev := runs[a.Port]; a.After && prev != nil {
				wait = prev.done
			}
			var p *proc
			if a.Adopt {
				p = adopted[a.Port]
			}
			delete(adopted, a.Port)
			runs[a.Port] = r
			go s.runSlot(rctx, life, r, wait, p)
		case actForgetRun:
			delete(runs, a.Port)
		}
	}
}

// stopAdopted stops the adopted worker p of slot port, no longer
// assigned, and returns the stopping run standing for it: done once the
// worker has exited and its pid file is removed, so that the slot's next
// worker starts only then.
func (s *Supervisor) stopAdopted(port int, p *proc) *slotRun {
	s.log.Info("supervisor: stopping an adopted worker no longer assigned", "port", port, "pid", p.rec.PID)
	r := &slotRun{port: port, work: work{Topology: p.rec.Topology, Artifact: p.rec.Artifact}, cancel: func() {},
		stopping: true, done: make(chan struct{})}
	r.stop.Store(true)
	go func() {
		defer close(r.done)
		terminate(p, s.clock, s.cfg.Grace)
		os.Remove(s.pidFile(port))
	}()
	return r
}

// isDone reports whether done is closed.
func isDone(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}
