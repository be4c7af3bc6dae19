package drpc

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/squallstream/squall/internal/clock"
)

// Defaults of the zero Config.
const (
	// DefaultTimeout is the deadline of a request that names none.
	DefaultTimeout = 10 * time.Second
	// DefaultMaxTimeout caps the deadline a request may ask for.
	DefaultMaxTimeout = time.Minute
	// DefaultMaxPending bounds the requests of one function waiting for
	// a batch.
	DefaultMaxPending = 1000
	// DefaultMaxConcurrent bounds the requests of one function in flight.
	DefaultMaxConcurrent = 64
	// DefaultMaxArgs bounds a request's arguments: 1 MiB, and 4 KiB more
	// so that a 1 MiB argument with a little framing (a trailing
	// newline, a prefix) still fits.
	DefaultMaxArgs = 1<<20 + 4<<10
	// DefaultRetryAfter is what a refused request is told to wait.
	DefaultRetryAfter = time.Second

	// DefaultReadHeaderTimeout bounds reading a request's headers.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultReadTimeout bounds reading a whole request, arguments
	// included: a 1 MiB argument at 40 KB/s.
	DefaultReadTimeout = 30 * time.Second
	// DefaultIdleTimeout bounds how long a keep-alive connection waits
	// for its next request.
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultMaxHeaderBytes bounds a request's line and headers.
	DefaultMaxHeaderBytes = 64 << 10
)

// ErrInvalidConfig is wrapped by the errors of Config.Validate.
var ErrInvalidConfig = errors.New("drpc: invalid config")

// Config of a Server. The zero Config is ready to use: every field left
// zero takes the default documented on it.
type Config struct {
	// Timeout is the deadline of a request that names none. Zero means
	// DefaultTimeout (10 s).
	Timeout time.Duration
	// MaxTimeout caps the deadline a request may ask for. Zero means
	// DefaultMaxTimeout (1 min).
	MaxTimeout time.Duration
	// MaxPending bounds the requests of one function waiting for a
	// batch; beyond it a request is refused with ErrBusy. Zero means
	// DefaultMaxPending (1000).
	MaxPending int
	// MaxConcurrent bounds the requests of one function in flight: from
	// their admission until their caller has the answer, whether they
	// wait for a batch or a batch holds them. Beyond it a request is
	// refused at once with ErrOverloaded (HTTP 429). Zero means
	// DefaultMaxConcurrent (64).
	MaxConcurrent int
	// MaxArgs bounds the size of a request's arguments (the HTTP
	// request's body), in bytes; larger is refused with ErrTooLarge
	// (HTTP 413). Zero means DefaultMaxArgs (1 MiB + 4 KiB).
	MaxArgs int
	// RetryAfter is what a request refused with ErrOverloaded or ErrBusy
	// is told to wait (the Retry-After header, in whole seconds, at least
	// one). Zero means DefaultRetryAfter (1 s).
	RetryAfter time.Duration

	// ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout and
	// MaxHeaderBytes are the budgets of the http.Server of HTTPServer.
	// Zero means DefaultReadHeaderTimeout (10 s), DefaultReadTimeout
	// (30 s), ReadTimeout + MaxTimeout + 5 s for WriteTimeout (net/http
	// counts it from the end of the headers: reading the arguments,
	// waiting for the result and writing it), DefaultIdleTimeout (2 min)
	// and DefaultMaxHeaderBytes (64 KiB).
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	MaxHeaderBytes    int

	// Clock times the deadlines; nil means the system clock.
	Clock clock.Clock
	// Logger receives a line per refused request (at Warn) and net/http's
	// own error lines; nil means none.
	Logger *slog.Logger
}

// Validate reports whether c can be used: no negative field, a Timeout
// within MaxTimeout, and a WriteTimeout past MaxTimeout (else an answer
// at its deadline could not be written).
func (c Config) Validate() error {
	for _, d := range []struct {
		name string
		v    int64
	}{
		{"Timeout", int64(c.Timeout)}, {"MaxTimeout", int64(c.MaxTimeout)},
		{"MaxPending", int64(c.MaxPending)}, {"MaxConcurrent", int64(c.MaxConcurrent)},
		{"MaxArgs", int64(c.MaxArgs)}, {"RetryAfter", int64(c.RetryAfter)},
		{"ReadHeaderTimeout", int64(c.ReadHeaderTimeout)}, {"ReadTimeout", int64(c.ReadTimeout)},
		{"WriteTimeout", int64(c.WriteTimeout)}, {"IdleTimeout", int64(c.IdleTimeout)},
		{"MaxHeaderBytes", int64(c.MaxHeaderBytes)},
	} {
		if d.v < 0 {
			return fmt.Errorf("%w: %s is negative", ErrInvalidConfig, d.name)
		}
	}
	d := c.withDefaults()
	if d.Timeout > d.MaxTimeout {
		return fmt.Errorf("%w: Timeout %v exceeds MaxTimeout %v", ErrInvalidConfig, d.Timeout, d.MaxTimeout)
	}
	if d.WriteTimeout <= d.MaxTimeout {
		return fmt.Errorf("%w: WriteTimeout %v does not exceed MaxTimeout %v: an answer at its deadline could not be written", ErrInvalidConfig, d.WriteTimeout, d.MaxTimeout)
	}
	return nil
}

func (c Config) withDefaults() Config {
	or := func(v *time.Duration, def time.Duration) {
		if *v == 0 {
			*v = def
		}
	}
	or(&c.Timeout, DefaultTimeout)
	or(&c.MaxTimeout, DefaultMaxTimeout)
	or(&c.RetryAfter, DefaultRetryAfter)
	or(&c.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	or(&c.ReadTimeout, DefaultReadTimeout)
	or(&c.WriteTimeout, c.ReadTimeout+c.MaxTimeout+5*time.Second)
	or(&c.IdleTimeout, DefaultIdleTimeout)
	if c.MaxPending == 0 {
		c.MaxPending = DefaultMaxPending
	}
	if c.MaxConcurrent == 0 {
		c.MaxConcurrent = DefaultMaxConcurrent
	}
	if c.MaxArgs == 0 {
		c.MaxArgs = DefaultMaxArgs
	}
	if c.MaxHeaderBytes == 0 {
		c.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	c.Clock = clock.Or(c.Clock)
	return c
}
