package trident

import (
	"context"
	"sync"

	"github.com/squallstream/squall/trident/internal/exec"
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

	// ID identifies the rejected input the same way in every attempt of
	// the batch, across worker restarts: the topology, the component
	// that rejected it, the txid and a fingerprint of Values
	// ("topology/component/txid/fingerprint"). Identical tuples rejected
	// by one component in one batch share an ID; a sink that writes each
	// letter once keeps, per ID, as many letters as one attempt put
	// (MemoryDeadLetters does).
	ID string
}

// DeadLetters receives rejected tuples. Put is called from the task that
// rejected the tuple, in the batch's processing phase; a batch that is
// replayed rejects the same tuple again, with the same Letter.ID, so Put
// must be idempotent on the ID (MemoryDeadLetters is) or tolerate
// duplicates (at-least-once). The ID is stable when the replay holds the
// same tuples in the same batch: always for transactional sources, and
// for opaque ones unless a replay moves a tuple to another txid (then a
// second letter with another ID is written: a duplicate, never a loss).
// An error from Put fails the batch if it is retryable and stops the
// worker otherwise.
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
func Reject(err error) error { return exec.Reject(err) }

// ErrNoDeadLetters is the cause of the crash when an operation rejects a
// tuple and Config.DeadLetters is nil.
var ErrNoDeadLetters = exec.ErrNoDeadLetters

// MemoryDeadLetters keeps rejected tuples in memory, for tests and demos.
// It keeps each letter once: for each Letter.ID, as many letters as the
// most any one attempt put (a replay puts them again). Letters without
// an ID are all kept.
type MemoryDeadLetters struct {
	letters memoryList[Letter]

	mu   sync.Mutex
	puts map[string]*letterPuts // by Letter.ID
}

// letterPuts counts the letters of one ID: in the latest attempt that
// put one, and the most in any attempt.
type letterPuts struct {
	attempt txn.Attempt
	n, kept int
}

// Put keeps l unless its letter is already kept.
func (m *MemoryDeadLetters) Put(_ context.Context, l Letter) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if l.ID != "" {
		if m.puts == nil {
			m.puts = map[string]*letterPuts{}
		}
		p := m.puts[l.ID]
		if p == nil {
			p = &letterPuts{attempt: l.Attempt}
			m.puts[l.ID] = p
		}
		if p.attempt != l.Attempt {
			p.attempt, p.n = l.Attempt, 0
		}
		if p.n++; p.n <= p.kept {
			return nil // written by an earlier attempt
		}
		p.kept = p.n
	}
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
