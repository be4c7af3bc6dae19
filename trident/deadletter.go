package trident

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/squallstream/squall/txn"
)

// Rejected returns the number of tuples rejected to the dead letters
// (replays included).
func (r *Running) Rejected() uint64 { return r.status.Rejected() }

// Letter is a tuple an operation rejected as bad input.
type Letter struct {
	Topology string
	Attempt  txn.Attempt // the batch attempt it was rejected in
	Fields   Fields      // the fields of Values
	Values   []any       // the rejected tuple
	Err      error       // why it was rejected
}

// DeadLetters receives rejected tuples. Put is called from the task that
// rejected the tuple, in the batch's processing phase; a batch that is
// replayed may reject the same tuple again, so Put must tolerate
// duplicates (at-least-once). An error from Put fails the batch if it is
// retryable and stops the worker otherwise.
type DeadLetters interface {
	Put(ctx context.Context, l Letter) error
}

// DeadLettersFunc adapts a function to DeadLetters.
type DeadLettersFunc func(ctx context.Context, l Letter) error

// Put calls f.
func (f DeadLettersFunc) Put(ctx context.Context, l Letter) error { return f(ctx, l) }

// Reject returns an error that an operation (Function, Filter, MapFunction,
// FlatMapFunction, an aggregator's Init or Aggregate, a QueryFunction's
// Execute) returns for a tuple
// that can never be processed, such as a record that does not parse: the
// tuple leaves the batch, goes to Config.DeadLetters with err, and the
// batch goes on. Rejecting is never silent: without Config.DeadLetters it
// stops the worker.
func Reject(err error) error {
	if err == nil {
		err = errors.New("rejected")
	}
	return &rejection{err: err}
}

type rejection struct{ err error }

func (r *rejection) Error() string { return "trident: tuple rejected: " + r.err.Error() }
func (r *rejection) Unwrap() error { return r.err }

// ErrNoDeadLetters is the cause of the crash when an operation rejects a
// tuple and Config.DeadLetters is nil.
var ErrNoDeadLetters = errors.New("trident: a tuple was rejected and Config.DeadLetters is nil")

// MemoryDeadLetters keeps rejected tuples in memory, for tests and demos.
type MemoryDeadLetters struct{ letters memoryList[Letter] }

// Put keeps l.
func (m *MemoryDeadLetters) Put(_ context.Context, l Letter) error {
	m.letters.add(l)
	return nil
}

// Letters returns the kept letters.
func (m *MemoryDeadLetters) Letters() []Letter { return m.letters.all() }

// memoryList is a list that goroutines append to: what the in-memory
// sinks (MemoryDeadLetters, MemoryQuarantine) keep.
type memoryList[T any] struct {
	mu    sync.Mutex
	items []T
}

func (l *memoryList[T]) add(x T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.items = append(l.items, x)
}

// all returns a copy of the items.
func (l *memoryList[T]) all() []T {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]T(nil), l.items...)
}

// rejected handles an operation's error for the tuple (values, fields) of
// batch a: a rejection goes to the dead letters and counts as handled
// (nil); any other error is returned as is.
func (s *stageTask) rejected(err error, a txn.Attempt, fields Fields, values []any) error {
	var r *rejection
	if !errors.As(err, &r) {
		return err
	}
	if s.cfg.DeadLetters == nil {
		return fmt.Errorf("%w: %s task %d: %w", ErrNoDeadLetters, s.stage.Name, s.task.ID, r.err)
	}
	l := Letter{Topology: s.task.Topology, Attempt: a, Fields: fields, Values: detach(slices.Clone(values)), Err: r.err}
	s.task.Status.AddRejected()
	if err := s.cfg.DeadLetters.Put(s.ctx, l); err != nil {
		return fmt.Errorf("trident: writing a dead letter: %w", err)
	}
	s.task.Log.Warn("tuple rejected to dead letters", "component", s.stage.Name, "task", s.task.ID, "batch", a.String(),
		"fields", fields, "values", fmt.Sprint(values), "err", r.err)
	return nil
}
