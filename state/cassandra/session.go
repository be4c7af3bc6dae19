package cassandra

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/gocql/gocql"
)

// Session is a connection to a Cassandra cluster for one keyspace: its
// tables, backing maps and a coordination store share it. It is safe for
// concurrent use. Close it after everything that uses it has stopped.
type Session struct {
	cfg      Config
	log      *slog.Logger
	gs       *gocql.Session
	inFlight chan struct{} // a token per request in flight
	retry    gocql.RetryPolicy

	mu     sync.Mutex
	closed bool
}

// Connect validates cfg and opens a session. It fails fast with a clear
// message when no host answers (retryable) or the credentials are refused
// (fatal). The keyspace need not exist yet.
func Connect(ctx context.Context, cfg Config) (*Session, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	type result struct {
		gs  *gocql.Session
		err error
	}
	done := make(chan result, 1)
	go func() { // gocql's CreateSession takes no context
		gs, err := cfg.cluster().CreateSession()
		done <- result{gs, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		go func() { // close the session if it still comes
			if r := <-done; r.gs != nil {
				r.gs.Close()
			}
		}()
		return nil, fmt.Errorf("cassandra: connect to %v: %w", cfg.Hosts, ctx.Err())
	}
	if r.err != nil {
		return nil, describe(fmt.Sprintf("connect to %v", cfg.Hosts), r.err)
	}
	s := &Session{
		cfg:      cfg,
		log:      cfg.logger(),
		gs:       r.gs,
		inFlight: make(chan struct{}, cfg.maxInFlight()),
	}
	if n := cfg.retries(); n > 0 {
		s.retry = retryPolicy{n: n}
	}
	return s, nil
}

// Keyspace returns the session's keyspace.
func (s *Session) Keyspace() string { return s.cfg.Keyspace }

// Gocql returns the underlying gocql session, for statements of your own.
// Do not close it; close the Session.
func (s *Session) Gocql() *gocql.Session { return s.gs }

// Close closes the session. Maps and stores that use it fail afterwards.
// Closing again does nothing.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		s.gs.Close()
	}
	return nil
}

// isClosed reports whether Close was called.
func (s *Session) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// acquire takes an in-flight token, or fails when ctx ends first.
func (s *Session) acquire(ctx context.Context) error {
	select {
	case s.inFlight <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Session) release() { <-s.inFlight }

// Statement returns an idempotent statement at the configured
// consistency, bound to ctx, with the session's retry policy attached.
// Use it only for idempotent statements (reads, upserts, deletes).
func (s *Session) Statement(ctx context.Context, stmt string, args ...any) *gocql.Query {
	q := s.gs.Query(stmt, args...).WithContext(ctx).Idempotent(true)
	if s.retry != nil {
		q = q.RetryPolicy(s.retry)
	}
	return q
}

// CAS returns a lightweight transaction (a statement with IF) bound to
// ctx: never retried blindly (its outcome after a timeout is unknown), at
// the configured serial consistency. Resolve a timeout with SerialRead.
func (s *Session) CAS(ctx context.Context, stmt string, args ...any) *gocql.Query {
	return s.gs.Query(stmt, args...).WithContext(ctx).SerialConsistency(s.cfg.serial())
}

// SerialRead returns a read at the serial consistency level, which
// completes any lightweight transaction in progress on its partition
// first.
func (s *Session) SerialRead(ctx context.Context, stmt string, args ...any) *gocql.Query {
	return s.Statement(ctx, stmt, args...).Consistency(gocql.Consistency(s.cfg.serial()))
}

// exec runs one statement under an in-flight token.
func (s *Session) exec(ctx context.Context, q *gocql.Query) error {
	if err := s.acquire(ctx); err != nil {
		return err
	}
	defer s.release()
	return q.Exec()
}

// Query runs a statement of your own through the session (prepared,
// idempotent, at the configured consistency, under the in-flight limit).
func (s *Session) Query(ctx context.Context, stmt string, args ...any) error {
	return Classify(s.exec(ctx, s.Statement(ctx, stmt, args...)))
}

// gocqlLogger forwards gocql's messages to slog at debug level.
type gocqlLogger struct{ l *slog.Logger }

func (g gocqlLogger) Print(v ...any) { g.l.Debug(fmt.Sprint(v...), "component", "gocql") }
func (g gocqlLogger) Printf(format string, v ...any) {
	g.l.Debug(fmt.Sprintf(format, v...), "component", "gocql")
}
func (g gocqlLogger) Println(v ...any) { g.l.Debug(fmt.Sprint(v...), "component", "gocql") }

// UnloggedBatch runs upserts as one unlogged batch: one request, under
// one in-flight token, idempotent, at the configured consistency, with
// the session's retry policy. It is not atomic (each statement may apply
// or not), so use it only for idempotent upserts whose failure the caller
// retries as a whole. Statements of several partitions save round trips
// but make the coordinator forward them to their replicas.
func (s *Session) UnloggedBatch(ctx context.Context, entries []gocql.BatchEntry) error {
	b := s.gs.NewBatch(gocql.UnloggedBatch).WithContext(ctx)
	for _, e := range entries {
		e.Idempotent = true
		b.Entries = append(b.Entries, e)
	}
	if s.retry != nil {
		b.RetryPolicy(s.retry)
	}
	if err := s.acquire(ctx); err != nil {
		return Classify(err)
	}
	defer s.release()
	return Classify(s.gs.ExecuteBatch(b))
}
