package trident

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident/coordstore"
)

// Config configures a running Trident topology. The zero Config is ready
// to use: every field left zero takes the default documented on it, and
// the topology runs on a local cluster of its own.
type Config struct {
	// Cluster runs the topology. Nil means a local cluster of the
	// topology's own, which Running.Stop shuts down; a shared cluster can
	// run several topologies (under distinct names), and Running.Stop
	// only kills this one there.
	Cluster *topology.LocalCluster

	// Topology configures the tuple-level runtime underneath; its zero
	// fields take topology.Config's defaults, except Ackers: zero means 1,
	// since Trident tracks batches with tuple trees (a negative value is
	// an error). Its MaxSpoutPending is ignored (MaxBatchesInFlight plays
	// that role) and DisableTimeouts is refused. The message timeout
	// (default 30s) is the batch timeout: a batch whose processing or
	// commit takes longer fails and is replayed.
	Topology topology.Config

	// Store keeps the coordinator's state and the spouts' metadata. Nil
	// means an in-memory store, which survives worker restarts but not the
	// process; use a durable store (trident/coordstore/boltstore) to resume
	// after a process restart.
	Store coordstore.Store

	// MaxBatchesInFlight bounds the batches in the processing phase. Zero
	// means 1.
	MaxBatchesInFlight int

	// BatchEmitInterval is the least time between the starts of two
	// batches. Zero means 50ms.
	BatchEmitInterval time.Duration

	// DeadLetters receives the tuples operations reject with Reject. Nil
	// means that a rejection stops the worker: bad input is never dropped
	// silently.
	DeadLetters DeadLetters

	// MaxAttempts halts the topology after a txid failed that many times;
	// Running.Err then names the batch and the last failure. Failures
	// marked failure.Unavailable (an outage of a dependency) do not count:
	// they only back off. A worker crash with the batch in flight counts,
	// and counts are kept in Store, so they survive restarts. Zero means
	// no limit (Storm's behaviour: replay forever).
	MaxAttempts int

	// RetryBackoff is the wait before a failed batch is replayed, after
	// the first failure since the last commit; every further failure
	// doubles it, up to MaxRetryBackoff, and each wait is jittered down by
	// at most half. The master's retries of failed store and spout calls
	// wait the same way. Waits are counted in BatchEmitInterval ticks,
	// rounded up. Zero means DefaultRetryBackoff (100ms).
	RetryBackoff time.Duration

	// MaxRetryBackoff caps the wait. Zero means DefaultMaxRetryBackoff
	// (30s), or RetryBackoff if that is longer.
	MaxRetryBackoff time.Duration

	// OnCorruptState says what happens when a persistent state holds a
	// value that cannot be decoded: CorruptHalt (the zero value) or
	// CorruptQuarantine. See CorruptPolicy.
	OnCorruptState CorruptPolicy

	// Quarantine receives corrupt stored values under CorruptQuarantine;
	// it must be set then.
	Quarantine Quarantine
}

// DefaultConfig returns a Config with the tuple runtime's defaults.
//
// Deprecated: the zero Config has the same defaults; use Config{}.
func DefaultConfig() Config { return Config{Topology: topology.DefaultConfig()} }

// ErrInvalid is wrapped by every error Submit returns for a bad topology or
// configuration.
var ErrInvalid = errors.New("trident: invalid topology or config")

// withDefaults returns c with the tuple runtime's zero fields that
// Trident defaults differently filled in.
func (c Config) withDefaults() Config {
	if c.Topology.Ackers == 0 {
		c.Topology.Ackers = 1
	}
	return c
}

// Validate reports every invalid field of c (after the zero-value
// defaults); each error wraps ErrInvalid.
func (c Config) Validate() error { return c.validate() }

func (c Config) validate() error {
	c = c.withDefaults()
	var errs []error
	if c.Topology.Ackers < 1 {
		errs = append(errs, fmt.Errorf("%w: Topology.Ackers is %d; Trident tracks batches with the acker, so it needs at least 1 (zero means 1)", ErrInvalid, c.Topology.Ackers))
	}
	if c.Topology.DisableTimeouts {
		errs = append(errs, fmt.Errorf("%w: Topology.DisableTimeouts would let a lost batch stall the topology forever", ErrInvalid))
	}
	if c.MaxBatchesInFlight < 0 || c.BatchEmitInterval < 0 || c.MaxAttempts < 0 {
		errs = append(errs, fmt.Errorf("%w: MaxBatchesInFlight, BatchEmitInterval and MaxAttempts must not be negative", ErrInvalid))
	}
	if err := c.validateRetry(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Topology.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Running is a submitted Trident topology. Stop it with Stop.
type Running struct {
	t       *Topology
	plan    *plan // the plan it runs
	run     *topology.Running
	cluster *topology.LocalCluster
	private bool // cluster is this topology's own: Stop shuts it down
	status  *status

	stopOnce sync.Once
	stopErr  error
}

// Committed returns the last committed txid.
func (r *Running) Committed() state.TxID { return state.TxID(r.status.committed.Load()) }

// Err returns the error that halted the topology, or nil: the attempt
// limit was reached (ErrAttemptLimit), or another process took the
// topology over (ErrSuperseded).
func (r *Running) Err() error { return r.status.Err() }

// Halted is closed when the topology halts for good (see Err).
func (r *Running) Halted() <-chan struct{} { return r.status.stopped }

// Generation returns the owner generation this submission acquired from
// the coordination store: a later submission of the same topology over
// the same store gets a greater one and supersedes this one.
func (r *Running) Generation() coordstore.Generation { return r.status.owner.Generation }

// WaitCommitted waits until txid is committed, the topology halts, or ctx
// is done.
func (r *Running) WaitCommitted(ctx context.Context, txid state.TxID) error {
	for {
		committed := r.status.commits.Wait() // before the check, so no commit is missed
		if r.Committed() >= txid {
			return nil
		}
		if err := r.Err(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("trident: waiting for txid %v (committed %v): %w", txid, r.Committed(), ctx.Err())
		case <-committed:
		case <-r.status.stopped:
		}
	}
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
	topo, p, st, err := t.build(ctx, &cfg)
	if err != nil {
		return nil, err
	}
	tc := cfg.Topology
	tc.MaxSpoutPending = 0
	c, private := cfg.Cluster, cfg.Cluster == nil
	if private {
		c = topology.NewLocalCluster()
	}
	r, err := c.Submit(t.name, topo, tc)
	if err != nil {
		return nil, err
	}
	return &Running{t: t, plan: p, run: r, cluster: c, private: private, status: st}, nil
}

// build checks the declarations, plans them and generates the tuple-level
// topology.
func (t *Topology) build(ctx context.Context, cfg *Config) (*topology.Topology, *plan, *status, error) {
	errs := append([]error(nil), t.errs...)
	if t.name == "" {
		errs = append(errs, errors.New("trident: the topology has no name"))
	}
	if len(t.sources) == 0 {
		errs = append(errs, errors.New("trident: the topology has no streams"))
	}
	if len(errs) > 0 {
		return nil, nil, nil, fmt.Errorf("%w: %w", ErrInvalid, errors.Join(errs...))
	}
	if cfg.Store == nil {
		cfg.Store = coordstore.NewMemory()
	}
	if cfg.BatchEmitInterval == 0 {
		cfg.BatchEmitInterval = 50 * time.Millisecond
	}
	owner, err := acquire(ctx, cfg.Store, t.name)
	if err != nil {
		return nil, nil, nil, err
	}
	st := newStatus(owner)
	p := t.plan()
	b := topology.NewBuilder()
	ms := b.Spout(masterComponent, func() topology.Spout {
		return &master{t: t, cfg: *cfg, store: cfg.Store, status: st}
	})
	ms.OutputStream(streamBatch, "msg").OutputStream(streamFreeze, "msg").
		OutputStream(streamCommit, "msg").OutputStream(streamSuccess, "msg")
	for _, g := range p.groups {
		d := b.Bolt(g.name, newGroupBolt(p, g, t, cfg, st)).Parallelism(g.parallelism)
		d.DirectStream(streamCoord, fieldBatch, "count")
		d.InputStream(masterComponent, streamSuccess, topology.All())
		if g.isSource() {
			d.InputStream(masterComponent, streamBatch, topology.All())
			d.InputStream(masterComponent, streamFreeze, topology.All())
		}
		if g.committer {
			d.InputStream(masterComponent, streamCommit, topology.All())
		}
		for _, up := range g.upstream {
			d.InputStream(up.name, streamCoord, topology.Direct())
		}
		for _, n := range g.nodes {
			if stream := p.fanouts[n.id].stream; stream != "" {
				d.OutputStream(stream, append(Fields{fieldBatch}, n.sch.fields...)...)
			}
		}
		for _, in := range g.inputs {
			d.InputStream(in.up.name, in.stream(), in.entry.grouping(in.side))
		}
	}
	topo, err := b.Build()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return topo, p, st, nil
}

// grouping returns the tuple-level grouping with which the node's group
// receives its input number side.
func (n *node) grouping(side int) topology.Grouping {
	r := n.route(side)
	switch r.how {
	case partLocalOrShuffle:
		return topology.LocalOrShuffle()
	case partFields:
		return topology.ByFields(r.fields...)
	case partGlobal:
		return topology.Global()
	case partBroadcast:
		return topology.All()
	case partBatchGlobal:
		return topology.Custom(func() topology.CustomGrouping { return &batchGrouping{} })
	default:
		return topology.Shuffle()
	}
}

// batchGrouping sends all tuples of a batch to the task its txid selects.
type batchGrouping struct{ targets []topology.TaskID }

func (g *batchGrouping) Prepare(targets []topology.TaskID) { g.targets = targets }

func (g *batchGrouping) ChooseTasks(_ topology.TaskID, v topology.Values, dst []topology.TaskID) []topology.TaskID {
	txid := uint64(v[0].(Attempt).TxID)
	return append(dst, g.targets[txid%uint64(len(g.targets))])
}
