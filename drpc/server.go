package drpc

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/squallstream/squall/internal/clock"
)

// Errors of Execute, matched with errors.Is.
var (
	// ErrUnknownFunction: no running topology serves the function.
	ErrUnknownFunction = errors.New("drpc: no topology serves this function")
	// ErrBusy: the function's queue is full.
	ErrBusy = errors.New("drpc: too many requests waiting")
	// ErrTimeout: the request's deadline passed before its result.
	ErrTimeout = errors.New("drpc: the request timed out")
	// ErrFailed: the request's batch failed.
	ErrFailed = errors.New("drpc: the request failed")
	// ErrStopped: the topology serving the function stopped.
	ErrStopped = errors.New("drpc: the topology serving the function stopped")
)

// Defaults of the zero Config.
const (
	DefaultTimeout    = 10 * time.Second
	DefaultMaxTimeout = time.Minute
	DefaultMaxPending = 1000
	DefaultMaxArgs    = 1 << 20
)

// Config of a Server. The zero Config is ready to use.
type Config struct {
	// Timeout is the deadline of a request that names none.
	Timeout time.Duration
	// MaxTimeout caps the deadline a request may ask for.
	MaxTimeout time.Duration
	// MaxPending bounds the requests of one function waiting for a batch.
	MaxPending int
	// MaxArgs bounds the size of a request's arguments, in bytes.
	MaxArgs int
	// Clock times the deadlines; nil means the system clock.
	Clock clock.Clock
}

func (c Config) withDefaults() Config {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxTimeout <= 0 {
		c.MaxTimeout = DefaultMaxTimeout
	}
	if c.MaxPending <= 0 {
		c.MaxPending = DefaultMaxPending
	}
	if c.MaxArgs <= 0 {
		c.MaxArgs = DefaultMaxArgs
	}
	c.Clock = clock.Or(c.Clock)
	return c
}

// Server holds the requests of its functions. It is safe for concurrent
// use.
type Server struct {
	cfg Config

	mu        sync.Mutex
	functions map[string]*Function
	nextID    uint64
}

// NewServer returns a Server.
func NewServer(cfg Config) *Server {
	return &Server{cfg: cfg.withDefaults(), functions: map[string]*Function{}}
}

// Result is a request's answer: one row per tuple the topology returned,
// the values of the fields ReturnResults names.
type Result struct {
	ID   string  `json:"id"`
	Rows [][]any `json:"rows"`
}

// Execute asks function with args and waits for the result, until the
// request's deadline (timeout, or the Config's Timeout when zero, at most
// its MaxTimeout) or ctx is done.
func (s *Server) Execute(ctx context.Context, function, args string, timeout time.Duration) (Result, error) {
	if len(args) > s.cfg.MaxArgs {
		return Result{}, fmt.Errorf("drpc: %s: arguments of %d bytes, at most %d", function, len(args), s.cfg.MaxArgs)
	}
	if timeout <= 0 {
		timeout = s.cfg.Timeout
	}
	timeout = min(timeout, s.cfg.MaxTimeout)
	s.mu.Lock()
	f := s.functions[function]
	s.nextID++
	id := strconv.FormatUint(s.nextID, 10)
	s.mu.Unlock()
	if f == nil {
		return Result{}, fmt.Errorf("%w: %q", ErrUnknownFunction, function)
	}
	r := &request{id: id, args: args, done: make(chan struct{})}
	if err := f.enqueue(r); err != nil {
		return Result{}, err
	}
	t := s.cfg.Clock.NewTimer(timeout)
	defer t.Stop()
	var cause error
	select {
	case <-r.done:
		return Result{ID: id, Rows: r.rows}, r.err
	case <-t.C():
		cause = fmt.Errorf("%w after %v: %s(%.80q)", ErrTimeout, timeout, function, args)
	case <-ctx.Done():
		cause = fmt.Errorf("%w: %s(%.80q): %w", ErrTimeout, function, args, ctx.Err())
	}
	f.abandon(r, cause)
	<-r.done // answered meanwhile, or abandoned
	return Result{ID: id, Rows: r.rows}, r.err
}

// Answer delivers the results of batch txid of function to its request
// (see Function.Answer); it does nothing for a function nobody serves.
func (s *Server) Answer(function string, txid uint64, rows [][]any) {
	s.mu.Lock()
	f := s.functions[function]
	s.mu.Unlock()
	if f != nil {
		f.Answer(txid, rows)
	}
}

// Function returns the topology's side of function, creating it; Execute
// refuses requests to a function nobody asked for. The topology closes it
// when it stops.
func (s *Server) Function(function string) *Function {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.functions[function]
	if f == nil || f.isClosed() {
		f = &Function{name: function, max: s.cfg.MaxPending, assigned: map[uint64]*request{}}
		s.functions[function] = f
	}
	return f
}
