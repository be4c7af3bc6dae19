package drpc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Errors of Execute, matched with errors.Is.
var (
	// ErrUnknownFunction: no running topology serves the function.
	ErrUnknownFunction = errors.New("drpc: no topology serves this function")
	// ErrOverloaded: MaxConcurrent requests of the function are in
	// flight; the request was refused at once.
	ErrOverloaded = errors.New("drpc: too many requests in flight")
	// ErrBusy: the function's queue is full.
	ErrBusy = errors.New("drpc: too many requests waiting")
	// ErrTooLarge: the arguments are over MaxArgs.
	ErrTooLarge = errors.New("drpc: arguments too large")
	// ErrTimeout: the request's deadline passed, or its caller went away,
	// before its result.
	ErrTimeout = errors.New("drpc: the request timed out")
	// ErrFailed: the request's batch failed.
	ErrFailed = errors.New("drpc: the request failed")
	// ErrRejected: an operation rejected the request's input (trident's
	// Reject); the error names the cause.
	ErrRejected = errors.New("drpc: the request's input was rejected")
	// ErrStopped: the topology serving the function stopped.
	ErrStopped = errors.New("drpc: the topology serving the function stopped")
)

// Server holds the requests of its functions. It is safe for concurrent
// use.
type Server struct {
	cfg      Config
	log      *slog.Logger
	counters counters

	mu        sync.Mutex
	functions map[string]*Function
	nextID    uint64
}

// NewServer returns a Server. It panics if cfg.Validate fails: check a
// Config built from user input with Validate first.
func NewServer(cfg Config) *Server {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	cfg = cfg.withDefaults()
	return &Server{cfg: cfg, log: cfg.Logger, functions: map[string]*Function{}}
}

// Result is a request's answer: one row per tuple the topology returned,
// the values of the fields ReturnResults names.
type Result struct {
	ID   string  `json:"id"`
	Rows [][]any `json:"rows"`
}

// Execute asks function with args and waits for the result, until the
// request's deadline (timeout, or the Config's Timeout when zero, at most
// its MaxTimeout) or ctx is done. When either comes first the request
// ends with ErrTimeout and the work of its batch is cancelled
// (Function.Context). A request is refused at once, and counted, when its
// arguments are over MaxArgs (ErrTooLarge), when MaxConcurrent requests of
// the function are in flight (ErrOverloaded) or when MaxPending wait for a
// batch (ErrBusy).
func (s *Server) Execute(ctx context.Context, function, args string, timeout time.Duration) (Result, error) {
	if len(args) > s.cfg.MaxArgs {
		return Result{}, s.refused(function, &s.counters.tooLarge,
			fmt.Errorf("%w: %s: arguments of %d bytes, at most %d", ErrTooLarge, function, len(args), s.cfg.MaxArgs))
	}
	f, err := s.admit(function)
	if err != nil {
		return Result{}, err
	}
	defer f.release()
	return s.execute(ctx, f, args, timeout)
}

// admit takes a place among the function's requests in flight; the
// caller releases it once it has the answer.
func (s *Server) admit(function string) (*Function, error) {
	s.mu.Lock()
	f := s.functions[function]
	s.mu.Unlock()
	if f == nil {
		return nil, fmt.Errorf("%w: %q", ErrUnknownFunction, function)
	}
	if err := f.acquire(); err != nil {
		if errors.Is(err, ErrOverloaded) {
			return nil, s.refused(function, &s.counters.overloaded, err)
		}
		return nil, err
	}
	s.counters.admitted.Add(1)
	return f, nil
}

// execute runs an admitted request.
func (s *Server) execute(ctx context.Context, f *Function, args string, timeout time.Duration) (Result, error) {
	if timeout <= 0 {
		timeout = s.cfg.Timeout
	}
	timeout = min(timeout, s.cfg.MaxTimeout)
	s.mu.Lock()
	s.nextID++
	id := strconv.FormatUint(s.nextID, 10)
	s.mu.Unlock()
	r := newRequest(id, args)
	if err := f.enqueue(r); err != nil {
		r.cancel(err)
		if errors.Is(err, ErrBusy) {
			return Result{}, s.refused(f.name, &s.counters.busy, err)
		}
		return Result{}, err
	}
	t := s.cfg.Clock.NewTimer(timeout)
	defer t.Stop()
	var cause error
	select {
	case <-r.done:
		return s.result(r)
	case <-t.C():
		cause = fmt.Errorf("%w after %v: %s(%.80q)", ErrTimeout, timeout, f.name, args)
	case <-ctx.Done():
		cause = fmt.Errorf("%w: %s(%.80q): %w", ErrTimeout, f.name, args, ctx.Err())
	}
	f.abandon(r, cause)
	<-r.done // answered meanwhile, or abandoned
	return s.result(r)
}

// result counts how r ended and returns it.
func (s *Server) result(r *request) (Result, error) {
	switch {
	case r.err == nil:
		s.counters.answered.Add(1)
	case errors.Is(r.err, ErrTimeout):
		s.counters.timedOut.Add(1)
	default:
		s.counters.failed.Add(1)
	}
	return Result{ID: r.id, Rows: r.rows}, r.err
}

// refused counts and logs a refused request, and returns err.
func (s *Server) refused(function string, n *atomic.Uint64, err error) error {
	n.Add(1)
	s.log.Warn("drpc: request refused", "function", function, "err", err)
	return err
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
		f = &Function{name: function, maxPending: s.cfg.MaxPending, maxConcurrent: s.cfg.MaxConcurrent, assigned: map[uint64]*request{}}
		s.functions[function] = f
	}
	return f
}

// Context returns the context of the request batch txid of function
// took, or nil (see Function.Context).
func (s *Server) Context(function string, txid uint64) context.Context {
	if f := s.function(function); f != nil {
		return f.Context(txid)
	}
	return nil
}

// Reject ends the request batch txid of function took, if it is still
// waiting, with an error matching ErrRejected that wraps cause: an
// operation rejected the request's input.
func (s *Server) Reject(function string, txid uint64, cause error) {
	if f := s.function(function); f != nil {
		f.Reject(txid, cause)
	}
}

// function returns the named function, or nil if nobody asked for it.
func (s *Server) function(name string) *Function {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.functions[name]
}
