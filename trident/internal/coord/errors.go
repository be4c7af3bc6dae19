package coord

import (
	"errors"
	"fmt"

	"github.com/squallstream/squall/txn"
)

var (
	// ErrInvalidConfig is wrapped by Config.Validate's errors.
	ErrInvalidConfig = errors.New("coord: invalid config")
	// ErrBatchTimeout is the failure reason of a batch that stayed in one
	// phase for Config.BatchTimeout ticks.
	ErrBatchTimeout = errors.New("coord: batch timed out")
	// ErrAttemptLimit is matched (errors.Is) by every *AttemptLimitError.
	ErrAttemptLimit = errors.New("coord: attempt limit reached")
	// ErrRestarted is the failure reason the shell may give Restarted: the
	// coordinator's predecessor stopped with the batch in flight.
	ErrRestarted = errors.New("coord: restarted with the batch in flight")
)

// AttemptLimitError halts a coordinator whose batch failed
// Config.MaxAttempts times. It names the batch, the number of failed
// attempts and the last failure reason, which Unwrap returns.
type AttemptLimitError struct {
	Last     txn.Attempt // the last failed attempt
	Failures int         // failures of Last.TxID counted, across restarts
	Reason   error       // why Last failed; may be nil
}

func (e *AttemptLimitError) Error() string {
	msg := fmt.Sprintf("coord: batch %s failed %d times, giving up", e.Last.TxID, e.Failures)
	if e.Reason != nil {
		msg += ": last failure (attempt " + e.Last.String() + "): " + e.Reason.Error()
	}
	return msg
}

// Is makes errors.Is(err, ErrAttemptLimit) true.
func (e *AttemptLimitError) Is(target error) bool { return target == ErrAttemptLimit }

// Unwrap returns the last failure reason.
func (e *AttemptLimitError) Unwrap() error { return e.Reason }
