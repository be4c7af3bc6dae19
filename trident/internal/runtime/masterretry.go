package runtime

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/internal/backoff"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/trident/internal/coord"
	"github.com/squallstream/squall/txn"
)

// coordConfig returns the batch coordinator's configuration. The master
// ticks the coordinator once per BatchEmitInterval, so the backoff bounds
// become that many ticks, rounded up.
func coordConfig(cfg Config, seed uint64) coord.Config {
	return coord.Config{
		MaxBatchesInFlight: cfg.MaxBatchesInFlight,
		EmitInterval:       1,
		IdleInterval:       idleTicks(cfg),
		MaxAttempts:        cfg.MaxAttempts,
		RetryBackoff:       ticks(cfg.RetryBackoff, cfg.BatchEmitInterval),
		MaxRetryBackoff:    ticks(cfg.MaxRetryBackoff, cfg.BatchEmitInterval),
		Seed:               seed,
	}
}

// idleTicks returns IdleBatchInterval in ticks, rounded up; 0 (no idle
// throttle) if it is not longer than one tick.
func idleTicks(cfg Config) int {
	if cfg.IdleBatchInterval <= cfg.BatchEmitInterval {
		return 0
	}
	return ticks(cfg.IdleBatchInterval, cfg.BatchEmitInterval)
}

// ticks returns d in ticks of length tick, rounded up, at least 1.
func ticks(d, tick time.Duration) int {
	return max(1, int((d+tick-1)/tick))
}

// shellRetry is the master's own retry state: how long it waits before
// trying a failed store or spout call again (with the same backoff as
// batches), and the health of the stream for logging.
type shellRetry struct {
	waits  backoff.Sequence // in nanoseconds; counts consecutive failed actions
	until  time.Time        // no action before
	health health
	log    *slog.Logger
}

func newShellRetry(cfg Config, seed uint64) shellRetry {
	return shellRetry{waits: backoff.Sequence{Backoff: backoff.New(int64(cfg.RetryBackoff), int64(cfg.MaxRetryBackoff), seed)}, log: cfg.logger()}
}

// newCoordinator makes the master's batch coordinator from the persisted
// state st, with a fresh jitter seed. After a worker restart (not the
// first start of the topology), it tells the coordinator that its
// predecessor crashed, so a batch that crashes the worker every time
// reaches the attempt limit.
func (m *master) newCoordinator(st coord.State) (*coord.Coordinator, error) {
	starts := m.status.starts.Add(1)
	seed := masterSeed(m.cfg.Topology.Seed, starts)
	m.retry = newShellRetry(m.cfg, seed)
	c, err := coord.New(coordConfig(m.cfg, seed), st)
	if err != nil {
		return nil, err
	}
	m.coord = c
	if starts > 1 {
		m.check(c.Restarted(coord.ErrRestarted))
	}
	return c, nil
}

// masterSeed returns the jitter seed of the master's start number starts:
// drawn from Config.Topology.Seed when that is set, so a run can be
// replayed from its seed, or fresh otherwise.
func masterSeed(base uint64, starts int64) uint64 {
	if base == 0 {
		return rand.Uint64()
	}
	return rand.New(rand.NewPCG(base, 0x6d6173746572^uint64(starts))).Uint64()
}

// failureCounts returns the failure counts of st for the coordinator
// record, nil when there are none.
func failureCounts(st coord.State) map[txn.TxID]uint32 {
	if len(st.Failures) == 0 {
		return nil
	}
	fs := make(map[txn.TxID]uint32, len(st.Failures))
	for _, f := range st.Failures {
		fs[f.TxID] = f.N
	}
	return fs
}

// checkCorrupt halts the topology when attempt a failed on a corrupt
// stored value Config.CorruptAttempts times and Config.MaxAttempts is zero
// (with MaxAttempts, the coordinator counts these failures like any
// other).
func (m *master) checkCorrupt(a txn.Attempt, reason error) {
	var de *state.DecodeError
	if !errors.As(reason, &de) || m.cfg.MaxAttempts > 0 || m.status.isHalted() {
		return
	}
	if m.corrupt == nil {
		m.corrupt = map[txn.TxID]int{}
	}
	m.corrupt[a.TxID]++
	if n := m.corrupt[a.TxID]; n >= m.cfg.CorruptAttempts {
		m.check(fmt.Errorf("%w: batch %v failed %d times on a corrupt stored value (last attempt %v; "+
			"repair or remove it, or set Config.OnCorruptState to CorruptQuarantine): %w",
			ErrAttemptLimit, a.TxID, n, a, de))
	}
}

// waiting reports whether the master must not execute actions yet.
func (m *master) waiting() bool { return m.clock.Now().Before(m.retry.until) }

// actionFailed notes that a store or spout call of the master failed
// retryably: the action is tried again after a backoff.
func (m *master) actionFailed(err error) {
	m.retry.until = m.clock.Now().Add(time.Duration(m.retry.waits.Next()))
	m.noteFailure(err, true)
}

// noteFailure counts a failed attempt and logs only a change of the
// stream's health: the first failure after success, or a failure with
// another cause. With report, such a change is also recorded for
// operators (Running.Errors); the failure of a batch's tuple tree is not,
// since the task that failed it reported it if it was a reported failure.
func (m *master) noteFailure(err error, report bool) {
	m.status.failedAttempts.Add(1)
	now := m.clock.Now()
	h := &m.retry.health
	switch h.failed(now, err) {
	case healthFailing:
		m.retry.log.Warn("trident: stream failing; batches are retried with backoff",
			"topology", m.name, "unavailable", failure.IsUnavailable(err), "err", err)
		if report {
			m.out.ReportError(err)
		}
	case healthChanged:
		m.retry.log.Warn("trident: stream still failing, with another error",
			"topology", m.name, "failed_attempts", h.attempts, "for", h.duration(now), "unavailable", failure.IsUnavailable(err), "err", err)
		if report {
			m.out.ReportError(err)
		}
	}
}

// noteCommit notes that txid committed, and logs a recovery.
func (m *master) noteCommit(txid txn.TxID) {
	for t := range m.corrupt {
		if t <= txid {
			delete(m.corrupt, t)
		}
	}
	h := &m.retry.health
	if h.succeeded() == healthRecovered {
		m.retry.log.Info("trident: stream recovered", "topology", m.name,
			"failed_attempts", h.attempts, "for", h.duration(m.clock.Now()), "not_logged", h.quiet)
	}
}
