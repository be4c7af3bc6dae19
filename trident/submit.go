package trident

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/squallstream/squall/trident/internal/exec"

	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/internal/plan"
	"github.com/squallstream/squall/trident/internal/runtime"
	"github.com/squallstream/squall/txn"
)

// Running is a submitted Trident topology. Stop it with Stop.
type Running struct {
	t       *Topology
	graph   []*plan.Node // the planned description of t's nodes, by id
	plan    *plan.Plan   // the plan it runs
	run     *topology.Running
	cluster *topology.LocalCluster
	private bool // cluster is this topology's own: Stop shuts it down
	status  *runtime.Status
	cfg     Config // as submitted, with the defaults generate filled in
	states  *exec.States

	stopOnce sync.Once
	stopErr  error
}

// Committed returns the last committed txid.
func (r *Running) Committed() txn.TxID { return r.status.Committed() }

// Err returns the error that halted the topology, or nil: the attempt
// limit was reached (ErrAttemptLimit), or another process took the
// topology over (ErrSuperseded).
func (r *Running) Err() error { return r.status.Err() }

// Halted is closed when the topology halts for good (see Err).
func (r *Running) Halted() <-chan struct{} { return r.status.Halted() }

// Generation returns the owner generation this submission acquired from
// the coordination store: a later submission of the same topology over
// the same store gets a greater one and supersedes this one.
func (r *Running) Generation() coordstore.Generation { return r.status.Owner().Generation }

// WaitCommitted waits until txid is committed, the topology halts, or ctx
// is done.
func (r *Running) WaitCommitted(ctx context.Context, txid txn.TxID) error {
	return r.status.WaitCommitted(ctx, txid)
}

// Submit checks the topology and cfg, builds the generated topology and
// runs it under the topology's name, on cfg.Cluster or, if that is nil, on
// a local cluster of its own.
//
// ctx bounds the submission, not the run: taking ownership of the
// topology from the coordination store (cfg.Store) retries a store that
// is unreachable until ctx is done. The topology runs until Running.Stop.
func (t *Topology) Submit(ctx context.Context, cfg Config) (*Running, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	topo, r, err := t.build(ctx, &cfg)
	if err != nil {
		return nil, err
	}
	tc := cfg.Topology
	tc.MaxSpoutPending = 0
	c, private := cfg.Cluster, cfg.Cluster == nil
	if private {
		c = topology.NewLocalCluster()
	}
	t.openDRPC()
	run, err := c.Submit(t.name, topo, tc)
	if err != nil {
		t.closeDRPC()
		return nil, err
	}
	r.run, r.cluster, r.private = run, c, private
	return r, nil
}

// build checks the declarations, takes ownership of the topology, plans
// it and generates the tuple-level topology; the Running it returns is
// not running yet.
func (t *Topology) build(ctx context.Context, cfg *Config) (*topology.Topology, *Running, error) {
	if err := t.check(); err != nil {
		return nil, nil, err
	}
	if cfg.Store == nil {
		cfg.Store = coordstore.NewMemory()
	}
	owner, err := runtime.Acquire(ctx, cfg.Store, cfg.Topology.Clock, t.name)
	if err != nil {
		return nil, nil, err
	}
	topo, r, err := t.generate(cfg, owner)
	if err != nil {
		return nil, nil, err
	}
	// Committed tells the stored txid from the start, not 0 until the
	// master has loaded it. A store that fails here is the master's to
	// retry; it publishes the same txid once it loads it.
	if rec, _, err := cfg.Store.LoadCoordinator(ctx, t.name); err == nil {
		r.status.SetCommitted(rec.Committed)
	}
	return topo, r, nil
}

// check reports the declaration errors of t.
func (t *Topology) check() error {
	errs := append([]error(nil), t.errs...)
	if t.name == "" {
		errs = append(errs, errors.New("trident: the topology has no name"))
	}
	if len(t.sources) == 0 {
		errs = append(errs, errors.New("trident: the topology has no streams"))
	}
	if err := t.checkDRPC(); err != nil {
		errs = append(errs, fmt.Errorf("trident: %w", err))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrInvalid, errors.Join(errs...))
	}
	return nil
}

// generate plans t and generates the tuple-level topology that runs it
// as owner; the Running it returns is not running yet.
func (t *Topology) generate(cfg *Config, owner coordstore.Fence) (*topology.Topology, *Running, error) {
	if cfg.BatchEmitInterval == 0 {
		cfg.BatchEmitInterval = 50 * time.Millisecond
	}
	r := &Running{t: t, graph: t.graph(), status: runtime.NewStatus(owner), cfg: *cfg}
	for _, d := range t.drpc {
		d.cause = func(txid uint64) error { return r.status.Failure(txn.TxID(txid)) }
	}
	r.plan = plan.New(r.graph)
	r.states = exec.NewStates(r.plan)
	requests, ecfg := t.drpcRequests(), cfg.execConfig()
	spec := runtime.Spec{Name: t.name, Plan: r.plan, NewProcessor: func(s *plan.Stage) runtime.Processor {
		return exec.NewProcessor(r.plan, s, len(t.nodes), &ecfg, r.states, requests)
	}, ValueTypes: t.registerValueTypes}
	for _, n := range t.sources {
		src := n.src
		spec.Sources = append(spec.Sources, runtime.Source{ID: src.id, NewAllocator: src.allocator, NewExecutor: src.executor, Waiting: src.waiting})
	}
	topo, err := runtime.Build(spec, cfg.runtimeConfig(), r.status)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return topo, r, nil
}
