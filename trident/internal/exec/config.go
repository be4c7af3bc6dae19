package exec

import (
	"context"
	"errors"

	"github.com/squallstream/squall/internal/clock"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/txn"
)

// Config is what the processors of a topology need of its configuration.
type Config struct {
	// Clock is the topology's clock, which windows read.
	Clock clock.Clock
	// RequireDurableState halts a task that opens state kept in this
	// process's memory (state.IsVolatile) with ErrVolatileState.
	RequireDurableState bool
	// DeadLetters receives the tuples operations reject; nil makes a
	// rejection crash the worker with ErrNoDeadLetters.
	DeadLetters func(ctx context.Context, r Rejected) error
	// Quarantine, if not nil, receives corrupt stored values: every
	// state a task opens must then hand them over (state.CorruptHandling).
	Quarantine func(ctx context.Context, c Corrupt) error
}

// Rejected is a tuple an operation rejected (trident.Letter).
type Rejected struct {
	Topology string
	Attempt  txn.Attempt
	Fields   []string
	Values   []any
	Err      error
	ID       string
}

// Corrupt is a stored value that could not be decoded
// (trident.Quarantined).
type Corrupt struct {
	Topology  string
	Component string
	Attempt   txn.Attempt
	*state.DecodeError
}

// Errors the processors return, which package trident exports.
var (
	ErrInvalid       = errors.New("trident: invalid topology or config")
	ErrVolatileState = errors.New("trident: state in memory only where durable state is required")
	ErrNoDeadLetters = errors.New("trident: a tuple was rejected and Config.DeadLetters is nil")
)

// Reject wraps err as the rejection of the tuple an operation was
// passed (trident.Reject).
func Reject(err error) error {
	if err == nil {
		err = errors.New("rejected")
	}
	return &rejection{err: err}
}

type rejection struct{ err error }

func (r *rejection) Error() string { return "trident: tuple rejected: " + r.err.Error() }
func (r *rejection) Unwrap() error { return r.err }
