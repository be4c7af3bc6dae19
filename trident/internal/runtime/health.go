package runtime

import (
	"errors"
	"time"
)

// healthEvent is what a health tracker asks its owner to log.
type healthEvent uint8

const (
	healthQuiet     healthEvent = iota // nothing: count it only
	healthFailing                      // healthy → failing
	healthChanged                      // still failing, with another cause
	healthRecovered                    // failing → healthy
)

// healthChangeEvery is the least time between two healthChanged events of
// one tracker: a cause that alternates is logged once a minute, not per
// attempt.
const healthChangeEvery = time.Minute

// health turns a stream of failed and successful attempts into state
// changes worth one log line each: the first failure after success, a
// failure with another cause (at most once per healthChangeEvery), and the
// first success after failures, with how many attempts failed and for how
// long. Every other failure is only counted. It is pure: the caller passes
// the time and does the logging.
type health struct {
	failing    bool
	since      time.Time // first failure of the current episode
	lastChange time.Time // the last event logged
	cause      string    // root cause of the last logged failure
	attempts   int       // failed attempts in the current episode
	quiet      int       // of which not logged
}

// failed records a failed attempt at now for err, and says what to log.
func (h *health) failed(now time.Time, err error) healthEvent {
	h.attempts++
	cause := rootCause(err)
	switch {
	case !h.failing:
		h.failing, h.since, h.lastChange, h.cause = true, now, now, cause
		h.attempts, h.quiet = 1, 0
		return healthFailing
	case cause != h.cause && now.Sub(h.lastChange) >= healthChangeEvery:
		h.lastChange, h.cause = now, cause
		return healthChanged
	}
	h.quiet++
	return healthQuiet
}

// succeeded records a success and says what to log; on recovery,
// attempts, quiet and since describe the episode that ended.
func (h *health) succeeded() healthEvent {
	if !h.failing {
		return healthQuiet
	}
	h.failing = false
	return healthRecovered
}

// duration is how long the current (or just ended) episode lasted at now.
func (h *health) duration(now time.Time) time.Duration { return now.Sub(h.since) }

// rootCause returns the message of the innermost error of err's chain
// (the last of a joined or multiply wrapped error): what stays the same
// from one attempt to the next while the context around it (batch, attempt
// number) changes.
func rootCause(err error) string {
	if err == nil {
		return ""
	}
	for {
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			errs := u.Unwrap()
			if len(errs) == 0 {
				return err.Error()
			}
			err = errs[len(errs)-1]
		default:
			next := errors.Unwrap(err)
			if next == nil {
				return err.Error()
			}
			err = next
		}
	}
}
