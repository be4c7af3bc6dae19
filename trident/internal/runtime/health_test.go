package runtime

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/squallstream/squall/failure"
)

func TestHealthLogsStateChangesOnly(t *testing.T) {
	var h health
	t0 := time.Unix(1000, 0)
	down := failure.Unavailable(errors.New("connection refused"))
	var events []healthEvent
	for i := range 1000 {
		err := fmt.Errorf("batch %d:%d: %w", 7, i, down) // the context changes every attempt
		if e := h.failed(t0.Add(time.Duration(i)*time.Millisecond), err); e != healthQuiet {
			events = append(events, e)
		}
	}
	if len(events) != 1 || events[0] != healthFailing {
		t.Fatalf("1000 failed attempts with one cause gave events %v, want one failing", events)
	}
	// Another cause is logged, at most once a minute.
	now := t0.Add(2 * time.Minute)
	if e := h.failed(now, errors.New("disk full")); e != healthChanged {
		t.Fatalf("new cause gave %v", e)
	}
	if e := h.failed(now.Add(time.Second), down); e != healthQuiet {
		t.Fatalf("cause flapping back within a minute gave %v", e)
	}
	if e := h.succeeded(); e != healthRecovered {
		t.Fatalf("success after failures gave %v", e)
	}
	if h.attempts != 1002 || h.quiet != 1000 || h.duration(now.Add(3*time.Second)) != 2*time.Minute+3*time.Second {
		t.Fatalf("episode: %d attempts, %d quiet, %v", h.attempts, h.quiet, h.duration(now.Add(3*time.Second)))
	}
	if e := h.succeeded(); e != healthQuiet {
		t.Fatalf("success while healthy gave %v", e)
	}
	if e := h.failed(now.Add(5*time.Second), down); e != healthFailing || h.attempts != 1 {
		t.Fatalf("a new episode gave %v with %d attempts", e, h.attempts)
	}
}

func TestRootCause(t *testing.T) {
	base := errors.New("timeout")
	for _, err := range []error{
		base,
		fmt.Errorf("a: %w", base),
		failure.Retryable(fmt.Errorf("b: %w", base)),
		fmt.Errorf("%w: %w", errBatchFailed, fmt.Errorf("c: %w", base)),
	} {
		if got := rootCause(err); got != "timeout" {
			t.Errorf("rootCause(%v) = %q", err, got)
		}
	}
	if rootCause(nil) != "" {
		t.Error("rootCause(nil) not empty")
	}
}
