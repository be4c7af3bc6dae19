package coord

import "fmt"

// maxWindow bounds MaxBatchesInFlight: the coordinator keeps one slot per
// txid in its window.
const maxWindow = 1 << 16

// Config configures a Coordinator. The zero value is valid: one batch at a
// time, no throttle, no timeout counted by the coordinator, no attempt limit.
type Config struct {
	// MaxBatchesInFlight is the number of consecutive txids after the last
	// committed one that may be active at once, and so bounds the batches in
	// the processing phase (Storm's topology.max.spout.pending). Zero means
	// 1, Storm's default.
	MaxBatchesInFlight int

	// EmitInterval is the least number of ticks between two batch emissions
	// (Storm's topology.trident.batch.emit.interval.millis, in ticks of the
	// shell's clock). Zero means no throttle: a batch is emitted as soon as
	// its slot is free and the spouts are ready.
	EmitInterval int

	// IdleInterval is the least number of ticks between two batch
	// emissions while the shell reports the topology idle (SetIdle: the
	// last processed batch carried nothing). It applies only where it is
	// longer than EmitInterval. Zero means no idle throttle: idle batches
	// start every EmitInterval like the others.
	IdleInterval int

	// BatchTimeout is the number of ticks a batch may stay in the processing
	// phase, or in the commit phase, before the coordinator fails it with
	// ErrBatchTimeout. Zero means the coordinator counts no timeout and the
	// shell reports timed-out batches with Fail.
	BatchTimeout int

	// MaxAttempts is the number of failed attempts after which a txid halts
	// the coordinator with an *AttemptLimitError. Only failures of the txid
	// itself count, not re-runs caused by the failure of an earlier txid,
	// and not failures whose reason is an outage (failure.IsUnavailable).
	// The count is part of the durable State, so it survives restarts.
	// Zero means no limit, as in Storm.
	MaxAttempts int
	// RetryBackoff is the number of ticks the re-run of a failed txid
	// waits after the first failure since the last commit; every further
	// failure doubles the wait, up to MaxRetryBackoff, and each wait is
	// jittered down by at most half. A commit resets it. Zero means no
	// wait.
	RetryBackoff int
	// MaxRetryBackoff caps the wait, in ticks. Zero means RetryBackoff.
	MaxRetryBackoff int
	// Seed seeds the jitter of the retry backoff: the same inputs with the
	// same seed give the same actions.
	Seed uint64
}

// Validate reports a configuration the coordinator cannot run with. The
// error wraps ErrInvalidConfig.
func (c Config) Validate() error {
	switch {
	case c.MaxBatchesInFlight < 0 || c.MaxBatchesInFlight > maxWindow:
		return fmt.Errorf("%w: MaxBatchesInFlight %d outside [0, %d]", ErrInvalidConfig, c.MaxBatchesInFlight, maxWindow)
	case c.EmitInterval < 0 || c.IdleInterval < 0:
		return fmt.Errorf("%w: negative EmitInterval %d or IdleInterval %d", ErrInvalidConfig, c.EmitInterval, c.IdleInterval)
	case c.BatchTimeout < 0:
		return fmt.Errorf("%w: negative BatchTimeout %d", ErrInvalidConfig, c.BatchTimeout)
	case c.MaxAttempts < 0:
		return fmt.Errorf("%w: negative MaxAttempts %d", ErrInvalidConfig, c.MaxAttempts)
	case c.RetryBackoff < 0 || c.MaxRetryBackoff < 0:
		return fmt.Errorf("%w: negative RetryBackoff %d or MaxRetryBackoff %d", ErrInvalidConfig, c.RetryBackoff, c.MaxRetryBackoff)
	case c.MaxRetryBackoff > 0 && c.MaxRetryBackoff < c.RetryBackoff:
		return fmt.Errorf("%w: MaxRetryBackoff %d below RetryBackoff %d", ErrInvalidConfig, c.MaxRetryBackoff, c.RetryBackoff)
	}
	return nil
}

// window returns MaxBatchesInFlight with its default applied.
func (c Config) window() int {
	if c.MaxBatchesInFlight == 0 {
		return 1
	}
	return c.MaxBatchesInFlight
}
