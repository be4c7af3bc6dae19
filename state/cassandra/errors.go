package cassandra

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/gocql/gocql"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/state"
)

// ErrSchema is matched by the errors of a table or keyspace that does not
// exist or does not have the columns its TableSpec describes. It is fatal.
var ErrSchema = errors.New("cassandra: schema mismatch")

// OpError is a failed read or write of a table: which table, which
// operation, how many keys the call had and how many of them failed, and
// the first failure with its key. It keeps the cause's failure kind
// (Classify): a timeout stays retryable.
type OpError struct {
	Table  string    // keyspace.table
	Op     string    // "get" or "put"
	Keys   int       // keys in the call
	Failed int       // keys whose statement failed (at least 1)
	Key    state.Key // the key of Err
	Err    error     // the first failure
}

func (e *OpError) Error() string {
	return fmt.Sprintf("cassandra: %s: %s of %d keys: %d failed, first at key %v: %v",
		e.Table, e.Op, e.Keys, e.Failed, e.Key, e.Err)
}

// Unwrap returns the first failure.
func (e *OpError) Unwrap() error { return e.Err }

// Retryable reports whether a failed statement should fail only the batch,
// to be replayed later, rather than the worker: client-side timeouts,
// lost or missing connections, and the server's unavailable, overloaded,
// bootstrapping, timeout and failure answers. Syntax, authentication,
// authorization, invalid-query and configuration errors are not: replaying
// cannot fix them.
func Retryable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var reqErr gocql.RequestError
	if errors.As(err, &reqErr) {
		switch reqErr.Code() {
		case gocql.ErrCodeUnavailable, gocql.ErrCodeOverloaded, gocql.ErrCodeBootstrapping,
			gocql.ErrCodeTruncate, gocql.ErrCodeWriteTimeout, gocql.ErrCodeReadTimeout,
			gocql.ErrCodeReadFailure, gocql.ErrCodeWriteFailure, gocql.ErrCodeCDCWriteFailure,
			gocql.ErrCodeCASWriteUnknown, gocql.ErrCodeServer, gocql.ErrCodeUnprepared:
			return true
		}
		return false
	}
	switch {
	case errors.Is(err, gocql.ErrTimeoutNoResponse), errors.Is(err, gocql.ErrTooManyTimeouts),
		errors.Is(err, gocql.ErrConnectionClosed), errors.Is(err, gocql.ErrNoStreams),
		errors.Is(err, gocql.ErrNoConnections), errors.Is(err, gocql.ErrNoConnectionsStarted),
		errors.Is(err, gocql.ErrUnavailable),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return true
	}
	// gocql flattens some dial errors into text.
	msg := err.Error()
	return strings.Contains(msg, "connection refused") || strings.Contains(msg, "i/o timeout")
}

// Unavailable reports whether a retryable error says that Cassandra is
// unavailable rather than that the statement failed: timeouts, lost or
// refused connections, interrupted calls and the server's unavailable,
// overloaded and bootstrapping answers. A read or write failure, a server
// error or an unknown CAS outcome is not: it may come from the data (a
// tombstone limit, for example) and fail the same way every time.
func Unavailable(err error) bool {
	if !Retryable(err) {
		return false
	}
	var reqErr gocql.RequestError
	if errors.As(err, &reqErr) {
		switch reqErr.Code() {
		case gocql.ErrCodeUnavailable, gocql.ErrCodeOverloaded, gocql.ErrCodeBootstrapping,
			gocql.ErrCodeWriteTimeout, gocql.ErrCodeReadTimeout:
			return true
		}
		return false
	}
	return true
}

// Classify marks err with the failure kind Retryable and Unavailable
// choose: an outage becomes failure.Unavailable, another retryable error
// failure.Retryable, and the others stay fatal. Errors already classified
// keep their kind.
func Classify(err error) error {
	if err == nil {
		return nil
	}
	var fe *failure.Error
	if errors.As(err, &fe) {
		return err
	}
	switch {
	case Unavailable(err):
		return failure.Unavailable(err)
	case Retryable(err):
		return failure.Retryable(err)
	}
	return err
}

// describe adds what an operator needs to the fatal errors of start-up:
// bad credentials, missing permissions, a schema that does not fit.
func describe(what string, err error) error {
	var reqErr gocql.RequestError
	if errors.As(err, &reqErr) {
		switch reqErr.Code() {
		case gocql.ErrCodeCredentials:
			return fmt.Errorf("cassandra: %s: authentication failed (check Username and Password): %w", what, err)
		case gocql.ErrCodeUnauthorized:
			return fmt.Errorf("cassandra: %s: the user lacks a permission: %w", what, err)
		case gocql.ErrCodeSyntax, gocql.ErrCodeInvalid:
			return fmt.Errorf("%w: %s: %v", ErrSchema, what, err)
		}
	}
	if strings.Contains(err.Error(), "authentication") || strings.Contains(err.Error(), "Authenticator") {
		return fmt.Errorf("cassandra: %s: authentication failed (check Username and Password): %w", what, err)
	}
	return Classify(fmt.Errorf("cassandra: %s: %w", what, err))
}

// retryPolicy retries a statement up to n more times, on the same host
// when the error is worth it (Retryable), after a short pause. It is
// attached to idempotent statements only.
type retryPolicy struct{ n int }

func (p retryPolicy) Attempt(q gocql.RetryableQuery) bool {
	if q.Attempts() > p.n {
		return false
	}
	pause := time.Duration(q.Attempts()) * 20 * time.Millisecond
	t := time.NewTimer(pause)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-q.Context().Done():
		return false
	}
}

func (p retryPolicy) GetRetryType(err error) gocql.RetryType {
	if Retryable(err) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return gocql.Retry
	}
	return gocql.Rethrow
}
