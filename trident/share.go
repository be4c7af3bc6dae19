package trident

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/transport"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/internal/plan"
	"github.com/squallstream/squall/trident/internal/runtime"
)

// MasterShare is the share that runs the master coordinator of a topology
// run across worker processes: the one that acquires the run's owner
// generation (Topology.Acquire) and whose Running reports commits.
const MasterShare = 0

// Share is one worker process's part of a topology run across several
// worker processes (cluster mode). Every share of a run uses the same
// topology declaration, Config, Run, Count and Generation; the executors
// of the generated topology are placed on the shares by a fixed rule
// (the master coordinator in MasterShare, every other executor in turn
// on the shares from 1 on), so the shares agree on the placement without
// talking.
type Share struct {
	// Run names this run of the topology on the wire: shares of
	// different runs (say, before and after a reassignment) refuse each
	// other's connections. Empty means the topology's name.
	Run string

	// Index is this share's, from 0 to Count-1.
	Index, Count int

	// Generation is the owner generation every share of the run writes
	// under: MasterShare's process acquires it with Topology.Acquire and
	// hands it to the others. A later run acquires a greater one, which
	// fences every write of this run.
	Generation coordstore.Generation

	// Peers is the address of every other share's transport server, by
	// index. A Client.Dial that resolves the address itself (a name
	// rather than host:port) lets a share move to a new address.
	Peers map[int]string

	// Listener, Client and Server are as in topology.WorkerSpec.
	Listener net.Listener
	Client   transport.ClientConfig
	Server   transport.ServerConfig
}

// ErrInvalidShare is wrapped by the errors RunShare returns for a Share
// that does not fit.
var ErrInvalidShare = errors.New("trident: invalid share")

func (s Share) check() error {
	var errs []error
	switch {
	case s.Count < 1:
		errs = append(errs, fmt.Errorf("%w: Count is %d, want at least 1", ErrInvalidShare, s.Count))
	case s.Index < 0 || s.Index >= s.Count:
		errs = append(errs, fmt.Errorf("%w: Index %d is not within [0, %d)", ErrInvalidShare, s.Index, s.Count))
	}
	if s.Generation == 0 {
		errs = append(errs, fmt.Errorf("%w: Generation is zero: acquire one with Topology.Acquire", ErrInvalidShare))
	}
	for i := range s.Count {
		if i != s.Index && s.Peers[i] == "" {
			errs = append(errs, fmt.Errorf("%w: no address for share %d in Peers", ErrInvalidShare, i))
		}
	}
	return errors.Join(errs...)
}

// Acquire makes a new run of the topology the owner of cfg.Store, which
// must be shared by every process that runs the topology, and returns
// the run's generation for Share.Generation. Like Submit, it retries a
// store that is unreachable until ctx is done.
func (t *Topology) Acquire(ctx context.Context, cfg Config) (coordstore.Generation, error) {
	if cfg.Store == nil {
		return 0, fmt.Errorf("%w: a run across worker processes needs a shared Config.Store", ErrInvalid)
	}
	owner, err := runtime.Acquire(ctx, cfg.Store, cfg.Topology.Clock, t.name)
	return owner.Generation, err
}

// RunShare runs share s of the topology in this process: the executors
// the placement gives it, and a transport to the other shares (see
// topology.RunWorker for how tuples, acks and timeouts cross). Only
// MasterShare's Running reports commits (Committed, WaitCommitted); a
// share whose state write is fenced by a newer run halts with
// ErrSuperseded, like a Submit. Stop stops this share only.
func (t *Topology) RunShare(cfg Config, s Share) (*Running, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Cluster != nil {
		return nil, fmt.Errorf("%w: Config.Cluster is for Submit, not RunShare", ErrInvalid)
	}
	if cfg.Store == nil {
		return nil, fmt.Errorf("%w: a run across worker processes needs a shared Config.Store", ErrInvalid)
	}
	if err := t.check(); err != nil {
		return nil, err
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	if len(t.drpc) > 0 && s.Count > 1 {
		return nil, fmt.Errorf("%w: DRPC streams run in one process: the requests live in the process of their drpc.Server", ErrInvalid)
	}
	topo, r, err := t.generate(&cfg, coordstore.Fence{Owner: t.name, Generation: s.Generation})
	if err != nil {
		return nil, err
	}
	tc := cfg.Topology
	tc.MaxSpoutPending = 0
	spec := topology.WorkerSpec{Self: shareID(s.Index), Tasks: map[topology.TaskID]topology.WorkerID{},
		Peers: map[topology.WorkerID]string{}, Listener: s.Listener, Client: s.Client, Server: s.Server}
	for task, share := range placeShares(topo, tc.Ackers, s.Count) {
		spec.Tasks[task] = shareID(share)
	}
	for i, addr := range s.Peers {
		if i != s.Index {
			spec.Peers[shareID(i)] = addr
		}
	}
	name := s.Run
	if name == "" {
		name = t.name
	}
	t.openDRPC()
	run, err := topology.RunWorker(name, topo, tc, spec)
	if err != nil {
		t.closeDRPC()
		return nil, err
	}
	r.run = run
	return r, nil
}

func shareID(i int) topology.WorkerID { return topology.WorkerID(strconv.Itoa(i)) }

// placeShares places the executors of the generated topology on count
// shares: the master coordinator's on MasterShare, then every other
// executor (components in the order of their ids, then the ackers) in
// turn on the shares from 1 on, wrapping around. It returns the share of
// every task.
func placeShares(topo *topology.Topology, ackers, count int) map[topology.TaskID]int {
	out := map[topology.TaskID]int{}
	i := 0
	for _, e := range executors(topo, ackers) {
		share := MasterShare
		if e.component != runtime.MasterComponent {
			share = dealtShare(i, count)
			i++
		}
		for _, task := range e.tasks {
			out[task] = share
		}
	}
	return out
}

// dealtShare is the share of the i-th executor (from 0) other than the
// master coordinator's, among count shares.
func dealtShare(i, count int) int { return (i + 1) % count }

// executor is one executor of the generated topology: a run of its
// component's tasks.
type executor struct {
	component string
	tasks     []topology.TaskID
}

// executors lists the executors of the generated topology in the order
// placeShares deals them: components in the order of their task ids,
// then the ackers (each acker task an executor of its own).
func executors(topo *topology.Topology, ackers int) []executor {
	var out []executor
	seen := map[string]bool{}
	for task, component := range topo.TaskComponents(ackers) {
		if seen[component] {
			continue
		}
		seen[component] = true
		runs := topo.ExecutorTasks(component)
		if runs == nil { // an acker task: an executor of its own
			out = append(out, executor{component, []topology.TaskID{topology.TaskID(task)}})
			seen[component] = false
			continue
		}
		for _, tasks := range runs {
			out = append(out, executor{component, tasks})
		}
	}
	return out
}

// PlanDigest identifies the generated topology that runs t with cfg: its
// stages, operations' fields and groupings, components and tasks. The
// shares of a run must agree on it; a worker that built a different
// topology (code or configuration that differs between processes) would
// place executors differently.
func (t *Topology) PlanDigest(cfg Config) (string, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return "", err
	}
	if err := t.check(); err != nil {
		return "", err
	}
	if cfg.Store == nil {
		cfg.Store = coordstore.NewMemory() // not used: nothing runs
	}
	topo, r, err := t.generate(&cfg, coordstore.Fence{Owner: t.name})
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n", t.name, plan.Print(r.plan))
	for task, component := range topo.TaskComponents(cfg.Topology.Ackers) {
		fmt.Fprintf(h, "%d %s\n", task, component)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
