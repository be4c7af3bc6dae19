package topology

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/squallstream/squall/internal/clock"
)

// Config configures a running topology. Fields left zero take the defaults
// documented on each field, except Ackers: zero turns tuple tracking off, so
// start from DefaultConfig unless that is what you want.
type Config struct {
	// Ackers is the number of acker tasks. Each tuple tree is tracked by
	// the acker task its root id hashes to. 0 turns tracking off: a
	// spout's Ack is called at emit time and bolt Ack/Fail do nothing.
	// DefaultConfig sets 1.
	Ackers int

	// MessageTimeout is how long a tuple tree may stay incomplete before
	// its spout receives Fail. A tree times out between MessageTimeout and
	// twice MessageTimeout after its last timeout reset. Zero means 30s.
	MessageTimeout time.Duration

	// DisableTimeouts turns message timeouts off: an incomplete tree then
	// stays pending until it is acked or failed. Combined with
	// MaxSpoutPending this can stall a spout forever.
	DisableTimeouts bool

	// MaxSpoutPending caps the number of pending tuple trees per spout
	// task; the runtime stops calling NextTuple while a task is at the
	// cap. Zero means unlimited. It has no effect with Ackers = 0.
	MaxSpoutPending int

	// BatchSize is the number of tuples an executor buffers per
	// destination before it sends them; a partial buffer is sent as soon
	// as the executor has no more input waiting. Zero means 256.
	BatchSize int

	// QueueCapacity is the number of batches an executor's input queue
	// holds; a full queue blocks its producers (backpressure). Zero means
	// 64.
	QueueCapacity int

	// SpoutIdleWait is how long a spout executor waits before calling
	// NextTuple again after a round in which no task emitted anything;
	// an ack, a fail or a Waker's wake-up ends the wait sooner. Zero means
	// 1ms.
	SpoutIdleWait time.Duration

	// StartInactive submits the topology with its spouts deactivated;
	// nothing is emitted until Running.Activate.
	StartInactive bool

	// RestartMinBackoff and RestartMaxBackoff bound the supervisor's
	// exponential backoff between a worker crash and its restart. Zero
	// means 100ms and 10s. A worker that ran longer than the maximum
	// before crashing restarts after the minimum again.
	RestartMinBackoff time.Duration
	RestartMaxBackoff time.Duration

	// Logger receives the runtime's log records. Nil discards them.
	Logger *slog.Logger

	// Clock is the runtime's only clock: the supervisor's restart
	// backoff, the acker's message-timeout ticker, the spout executor's
	// idle wait, the emit times and complete latency of tracked tuples,
	// the times of reported errors and crashes, and the master of a
	// Trident topology (batch emit interval, retry waits, batch latency).
	// Nil means the system clock. With a clock that stands still (a test's
	// manual clock), spouts are called again only when an ack, a fail or a
	// Waker's wake-up arrives, or when the clock is advanced past
	// SpoutIdleWait.
	Clock clock.Clock

	// Seed makes the runtime's randomness reproducible: the edge and root
	// ids and shuffle choices of every executor, and the retry jitter of a
	// Trident master, are drawn from PRNGs seeded from it, the worker's
	// incarnation and the executor's index. Zero means fresh seeds from
	// crypto/rand. Goroutine scheduling is not seeded, so two runs with
	// one seed draw the same sequences but may interleave them
	// differently.
	Seed uint64
}

// DefaultConfig returns Storm's defaults: one acker, a 30s message timeout,
// timeouts enabled and unlimited max spout pending.
func DefaultConfig() Config { return Config{Ackers: 1} }

// ErrInvalidConfig is wrapped by every error Validate returns.
var ErrInvalidConfig = errors.New("topology: invalid config")

// Validate reports every invalid field.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...))
	}
	if c.Ackers < 0 {
		bad("Ackers is %d; use 0 to turn tracking off or a positive number of acker tasks", c.Ackers)
	}
	if c.MessageTimeout < 0 {
		bad("MessageTimeout is %v; it must be positive (or zero for 30s)", c.MessageTimeout)
	}
	if c.MaxSpoutPending < 0 {
		bad("MaxSpoutPending is %d; it must be positive (or zero for unlimited)", c.MaxSpoutPending)
	}
	if c.BatchSize < 0 {
		bad("BatchSize is %d; it must be positive (or zero for 256)", c.BatchSize)
	}
	if c.QueueCapacity < 0 {
		bad("QueueCapacity is %d; it must be positive (or zero for 64)", c.QueueCapacity)
	}
	if c.SpoutIdleWait < 0 {
		bad("SpoutIdleWait is %v; it must be positive (or zero for 1ms)", c.SpoutIdleWait)
	}
	if c.RestartMinBackoff < 0 || c.RestartMaxBackoff < 0 {
		bad("restart backoffs must not be negative (got %v and %v)", c.RestartMinBackoff, c.RestartMaxBackoff)
	}
	if c.RestartMinBackoff > 0 && c.RestartMaxBackoff > 0 && c.RestartMinBackoff > c.RestartMaxBackoff {
		bad("RestartMinBackoff %v is above RestartMaxBackoff %v", c.RestartMinBackoff, c.RestartMaxBackoff)
	}
	return errors.Join(errs...)
}

// withDefaults returns c with every zero field that has a default set.
func (c Config) withDefaults() Config {
	if c.MessageTimeout == 0 {
		c.MessageTimeout = 30 * time.Second
	}
	if c.BatchSize == 0 {
		c.BatchSize = 256
	}
	if c.QueueCapacity == 0 {
		c.QueueCapacity = 64
	}
	if c.SpoutIdleWait == 0 {
		c.SpoutIdleWait = time.Millisecond
	}
	if c.RestartMinBackoff == 0 {
		c.RestartMinBackoff = 100 * time.Millisecond
	}
	if c.RestartMaxBackoff == 0 {
		c.RestartMaxBackoff = 10 * time.Second
	}
	if c.RestartMaxBackoff < c.RestartMinBackoff {
		c.RestartMaxBackoff = c.RestartMinBackoff
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	c.Clock = clock.Or(c.Clock)
	return c
}

func (c Config) acking() bool { return c.Ackers > 0 }
