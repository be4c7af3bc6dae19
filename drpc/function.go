package drpc

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Function is the topology's side of one function: the requests waiting
// for a batch and those a batch holds. Batches are named by their txid;
// the topology calls Next when it emits a batch attempt, Answer when the
// batch's results are complete, and Committed when txids committed.
type Function struct {
	name          string
	maxPending    int
	maxConcurrent int

	mu       sync.Mutex
	pending  []*request          // FIFO, waiting for a batch
	assigned map[uint64]*request // by txid
	inflight int                 // admitted requests whose caller waits
	closed   bool
	cause    func(txid uint64) error
}

// errBatchEnded is the cause of the context of an answered request once
// its batch is forgotten (committed, released or closed).
var errBatchEnded = errors.New("drpc: the request's batch ended")

type request struct {
	id      string
	args    string
	attempt int // of the batch that took it

	// ctx is the request's work: done when the request ends without an
	// answer (cause: its error) or once its batch is forgotten.
	ctx    context.Context
	cancel context.CancelCauseFunc

	done chan struct{} // closed once answered, failed or abandoned
	rows [][]any
	err  error
}

func newRequest(id, args string) *request {
	ctx, cancel := context.WithCancelCause(context.Background())
	return &request{id: id, args: args, ctx: ctx, cancel: cancel, done: make(chan struct{})}
}

// Request is what a batch emits for a request.
type Request struct {
	ID   string
	Args string
}

// Name returns the function's name.
func (f *Function) Name() string { return f.name }

// FailureCause has the Function ask cause why a batch failed, to tell the
// caller of its request.
func (f *Function) FailureCause(cause func(txid uint64) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cause = cause
}

// acquire admits a request to the function: it fails with ErrStopped
// when the function is closed and with ErrOverloaded when maxConcurrent
// requests are in flight. An admitted request calls release once its
// caller has the answer.
func (f *Function) acquire() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.closed:
		return fmt.Errorf("%w: %s", ErrStopped, f.name)
	case f.inflight >= f.maxConcurrent:
		return fmt.Errorf("%w: %d requests to %s in flight already", ErrOverloaded, f.inflight, f.name)
	}
	f.inflight++
	return nil
}

func (f *Function) release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inflight--
}

// InFlight returns the number of admitted requests whose callers wait.
func (f *Function) InFlight() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.inflight
}

func (f *Function) enqueue(r *request) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.closed:
		return fmt.Errorf("%w: %s", ErrStopped, f.name)
	case len(f.pending) >= f.maxPending:
		return fmt.Errorf("%w: %d requests to %s wait already", ErrBusy, len(f.pending), f.name)
	}
	f.pending = append(f.pending, r)
	return nil
}

// abandon ends r with err if nothing answered it yet.
func (f *Function) abandon(r *request, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, p := range f.pending {
		if p == r {
			f.pending = append(f.pending[:i], f.pending[i+1:]...)
			break
		}
	}
	r.finish(nil, err)
}

// Next returns the request of batch txid's attempt, or nil for none. The
// first attempt of a txid takes the oldest waiting request; a later
// attempt (a replay) fails the request its first attempt took, with the
// cause of the failure, and carries none: a request sees one attempt.
func (f *Function) Next(txid uint64, attempt int) *Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r := f.assigned[txid]; r != nil {
		if attempt != r.attempt {
			err := fmt.Errorf("%w: %s: its batch (txid %d, attempt %d) failed", ErrFailed, f.name, txid, r.attempt)
			if f.cause != nil {
				if c := f.cause(txid); c != nil {
					err = fmt.Errorf("%w: %w", err, c)
				}
			}
			r.finish(nil, err)
			r.cancel(err) // its attempt is over, answered or not
			return nil
		}
		return &Request{ID: r.id, Args: r.args}
	}
	for len(f.pending) > 0 {
		r := f.pending[0]
		f.pending = f.pending[1:]
		if r.ended() {
			continue
		}
		r.attempt = attempt
		f.assigned[txid] = r
		return &Request{ID: r.id, Args: r.args}
	}
	return nil
}

// Context returns the context of the request batch txid took, or nil if
// it took none. The work of the request's batch runs under it: it is done
// when the request ends without an answer (its deadline passed, its
// caller went away, its batch failed, the topology stopped; the cause is
// the request's error) and, for an answered request, once its batch is
// forgotten (Committed, Release, Close).
func (f *Function) Context(txid uint64) context.Context {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r := f.assigned[txid]; r != nil {
		return r.ctx
	}
	return nil
}

// Answer delivers the results of batch txid to its request, if it has one
// that is still waiting.
func (f *Function) Answer(txid uint64, rows [][]any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r := f.assigned[txid]; r != nil {
		r.finish(rows, nil)
	}
}

// Reject ends the request of batch txid, if it has one that is still
// waiting, with an error matching ErrRejected that wraps cause, and
// cancels the rest of its work.
func (f *Function) Reject(txid uint64, cause error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r := f.assigned[txid]; r != nil {
		r.finish(nil, fmt.Errorf("%w: %s: %w", ErrRejected, f.name, cause))
	}
}

// Committed forgets the batches up to txid.
func (f *Function) Committed(txid uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for t, r := range f.assigned {
		if t <= txid {
			r.finish(nil, fmt.Errorf("%w: %s: its batch (txid %d) committed without results", ErrFailed, f.name, t))
			r.cancel(errBatchEnded)
			delete(f.assigned, t)
		}
	}
}

// Waiting returns the number of requests waiting for a batch.
func (f *Function) Waiting() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.pending)
}

// Release fails the requests that batches hold, with ErrStopped: the
// topology's worker that emitted them stops (a restart replays their
// batches without them). Waiting requests stay for the next batches.
func (f *Function) Release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	err := fmt.Errorf("%w: %s: the worker running the request's batch stopped", ErrStopped, f.name)
	for _, r := range f.assigned {
		r.finish(nil, err)
		r.cancel(errBatchEnded)
	}
	f.assigned = map[uint64]*request{}
}

// Close fails every request waiting or held with ErrStopped; Execute
// refuses new ones until the function is asked for again
// (Server.Function).
func (f *Function) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	err := fmt.Errorf("%w: %s", ErrStopped, f.name)
	for _, r := range f.pending {
		r.finish(nil, err)
	}
	for _, r := range f.assigned {
		r.finish(nil, err)
		r.cancel(errBatchEnded)
	}
	f.pending, f.assigned = nil, map[uint64]*request{}
	return nil
}

func (f *Function) isClosed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}

// finish ends r once: the first answer or error wins. An error also
// cancels the request's work, with the error as the cause.
func (r *request) finish(rows [][]any, err error) {
	if r.ended() {
		return
	}
	r.rows, r.err = rows, err
	close(r.done)
	if err != nil {
		r.cancel(err)
	}
}

func (r *request) ended() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}
