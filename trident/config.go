package trident

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/internal/exec"
	"github.com/squallstream/squall/trident/internal/runtime"
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
	// an error), and SpoutIdleWait: zero means DefaultSpoutIdleWait, since
	// the master wakes its executor itself. Its MaxSpoutPending is ignored (MaxBatchesInFlight plays
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

	// IdleBatchInterval is the least time between the starts of two
	// batches while the topology is idle: its last processed batch
	// carried no tuple from any source, and no source reports data
	// waiting (a DRPC stream does as soon as a request arrives, so
	// requests are not held back). An idle topology still runs batches,
	// so txids keep counting time and processing-time windows advance,
	// but at this pace instead of BatchEmitInterval's, each with its
	// commit and store write; the first batch that carries tuples ends
	// the idleness. A record that arrives while idle waits at most this
	// long for its batch to start. Zero means DefaultIdleBatchInterval;
	// a value not above BatchEmitInterval starts idle batches every
	// BatchEmitInterval, as before. The master sees a batch as empty only
	// when every source task runs in its process: in a run across worker
	// processes (RunShare) with source tasks elsewhere, it never idles.
	IdleBatchInterval time.Duration

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

	// RequireDurableState refuses, when a task opens it, a persistent
	// state whose data lives only in the process's memory
	// (state.Volatile: OpaqueMemory and the other memory factories): the
	// topology halts with an error wrapping ErrVolatileState. A cluster's
	// workers set it, since a restarted worker would count from zero
	// again; AllowVolatileState overrides it.
	RequireDurableState bool

	// AllowVolatileState accepts memory state even where durable state is
	// required (a demonstration, a test whose counts do not matter):
	// what it holds is lost whenever a worker restarts.
	AllowVolatileState bool

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

// DefaultIdleBatchInterval is the default of Config.IdleBatchInterval:
// an idle topology commits one batch a second instead of twenty, and a
// record arriving after a quiet spell waits at most a second longer.
const DefaultIdleBatchInterval = time.Second

// DefaultSpoutIdleWait is Trident's default for Topology.SpoutIdleWait:
// the master coordinator spout wakes its executor itself whenever it has
// work, so the idle wait is only a safety net.
const DefaultSpoutIdleWait = time.Second

// withDefaults returns c with the tuple runtime's zero fields that
// Trident defaults differently filled in.
func (c Config) withDefaults() Config {
	if c.Topology.Ackers == 0 {
		c.Topology.Ackers = 1
	}
	if c.IdleBatchInterval == 0 {
		c.IdleBatchInterval = DefaultIdleBatchInterval
	}
	if c.Topology.SpoutIdleWait == 0 {
		// The master coordinator wakes its executor when it has work
		// (topology.Waker), so the executor need not poll it.
		c.Topology.SpoutIdleWait = DefaultSpoutIdleWait
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
	if c.MaxBatchesInFlight < 0 || c.BatchEmitInterval < 0 || c.IdleBatchInterval < 0 || c.MaxAttempts < 0 {
		errs = append(errs, fmt.Errorf("%w: MaxBatchesInFlight, BatchEmitInterval, IdleBatchInterval and MaxAttempts must not be negative", ErrInvalid))
	}
	if err := c.validateRetry(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Topology.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Defaults of Config.RetryBackoff and Config.MaxRetryBackoff.
const (
	DefaultRetryBackoff    = 100 * time.Millisecond
	DefaultMaxRetryBackoff = 30 * time.Second
)

// retryBounds returns the backoff bounds of cfg with their defaults.
func (c Config) retryBounds() (base, limit time.Duration) {
	base, limit = c.RetryBackoff, c.MaxRetryBackoff
	if base == 0 {
		base = DefaultRetryBackoff
	}
	if limit == 0 {
		limit = max(DefaultMaxRetryBackoff, base)
	}
	return base, limit
}

// validateRetry checks the retry settings.
func (c Config) validateRetry() error {
	if c.RetryBackoff < 0 || c.MaxRetryBackoff < 0 {
		return fmt.Errorf("%w: RetryBackoff %v and MaxRetryBackoff %v must not be negative", ErrInvalid, c.RetryBackoff, c.MaxRetryBackoff)
	}
	if base, limit := c.retryBounds(); limit < base {
		return fmt.Errorf("%w: MaxRetryBackoff %v is below RetryBackoff %v", ErrInvalid, limit, base)
	}
	switch c.OnCorruptState {
	case CorruptHalt, CorruptQuarantine:
	default:
		return fmt.Errorf("%w: unknown OnCorruptState %d", ErrInvalid, c.OnCorruptState)
	}
	if c.OnCorruptState == CorruptQuarantine && c.Quarantine == nil {
		return fmt.Errorf("%w: OnCorruptState is CorruptQuarantine but Quarantine is nil", ErrInvalid)
	}
	return nil
}

// runtimeConfig is what the runtime needs of c, every default filled in:
// c has been through withDefaults and build's defaults.
func (c *Config) runtimeConfig() runtime.Config {
	base, limit := c.retryBounds()
	return runtime.Config{
		Topology:           c.Topology,
		Store:              c.Store,
		MaxBatchesInFlight: c.MaxBatchesInFlight,
		BatchEmitInterval:  c.BatchEmitInterval,
		IdleBatchInterval:  c.IdleBatchInterval,
		MaxAttempts:        c.MaxAttempts,
		CorruptAttempts:    CorruptAttempts,
		RetryBackoff:       base,
		MaxRetryBackoff:    limit,
	}
}

// execConfig is what the stage processors need of c.
func (c *Config) execConfig() exec.Config {
	ec := exec.Config{Clock: c.Topology.Clock, RequireDurableState: c.RequireDurableState && !c.AllowVolatileState}
	if dl := c.DeadLetters; dl != nil {
		ec.DeadLetters = func(ctx context.Context, r exec.Rejected) error {
			return dl.Put(ctx, Letter{Topology: r.Topology, Attempt: r.Attempt, Fields: r.Fields, Values: r.Values, Err: r.Err, ID: r.ID})
		}
	}
	if q := c.Quarantine; q != nil && c.OnCorruptState == CorruptQuarantine {
		ec.Quarantine = func(ctx context.Context, cv exec.Corrupt) error {
			return q.Put(ctx, Quarantined{Topology: cv.Topology, Component: cv.Component, Attempt: cv.Attempt,
				Map: cv.Map, Key: cv.Key, Raw: cv.Raw, Err: cv.Err})
		}
	}
	return ec
}
