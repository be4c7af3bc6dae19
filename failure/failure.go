// Package failure classifies errors the way squall's runtime acts on them.
//
// squall follows Storm's error model:
//
//   - a retryable failure (Storm's FailedException) fails the tuple or batch
//     that was being processed; its source replays it;
//   - a reported failure does the same and is also recorded where operators
//     can see it (component, task, time, error);
//   - anything else is fatal: the worker stops fast and its supervisor
//     restarts it, and processing resumes from what was last acknowledged or
//     committed.
//
// Wrap an error with Retryable or Reported to choose the first two
// behaviours; an unwrapped error is fatal. Unavailable is a retryable
// failure that says a dependency is down (a timeout, a refused connection,
// too few replicas): it is replayed like any other, but an attempt limit
// does not count it, because waiting can fix it and replaying the same
// input again cannot make it fail differently. The wrappers keep the cause
// reachable through errors.Is and errors.As.
package failure

import "errors"

// Kind says how the runtime treats an error.
type Kind uint8

const (
	// Fatal errors stop the worker; the supervisor restarts it.
	Fatal Kind = iota
	// Retry errors fail the current tuple or batch so that it is replayed.
	Retry
	// Report errors behave like Retry and are also recorded for operators.
	Report
	// Outage errors behave like Retry; they say that a dependency is
	// unavailable, so attempt limits do not count them.
	Outage
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case Retry:
		return "retryable"
	case Report:
		return "reported"
	case Outage:
		return "unavailable"
	default:
		return "fatal"
	}
}

// Error is an error marked with how the runtime must treat it.
type Error struct {
	Kind Kind
	Err  error
}

func (e *Error) Error() string {
	if e.Err == nil {
		return e.Kind.String() + " failure"
	}
	return e.Err.Error()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Retryable marks err as a retryable failure. It returns nil for a nil err.
func Retryable(err error) error {
	if err == nil {
		return nil
	}
	return &Error{Kind: Retry, Err: err}
}

// Reported marks err as a retryable failure that is also reported to
// operators. It returns nil for a nil err.
func Reported(err error) error {
	if err == nil {
		return nil
	}
	return &Error{Kind: Report, Err: err}
}

// Unavailable marks err as a retryable failure caused by an unavailable
// dependency: a timeout, a lost or refused connection, a service that
// answers "unavailable" or "overloaded". It returns nil for a nil err.
func Unavailable(err error) error {
	if err == nil {
		return nil
	}
	return &Error{Kind: Outage, Err: err}
}

// KindOf returns how the runtime treats err: the kind of the outermost
// *Error in its chain, or Fatal when there is none. A nil err is Fatal too;
// callers check for nil first.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Fatal
}

// IsRetryable reports whether err fails only the current tuple or batch
// (a Retry or Report failure) rather than the worker.
func IsRetryable(err error) bool { return err != nil && KindOf(err) != Fatal }

// IsReported reports whether err must also be shown to operators.
func IsReported(err error) bool { return err != nil && KindOf(err) == Report }

// IsUnavailable reports whether err is a retryable failure caused by an
// unavailable dependency (see Unavailable): it says nothing about the input
// being processed, so attempt limits do not count it.
func IsUnavailable(err error) bool { return err != nil && KindOf(err) == Outage }
