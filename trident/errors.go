package trident

import (
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/trident/internal/exec"
	"github.com/squallstream/squall/trident/internal/runtime"
)

// ErrInvalid is wrapped by every error Submit returns for a bad topology or
// configuration.
var ErrInvalid = exec.ErrInvalid

// ErrSuperseded is matched by Running.Err once another process took the
// topology over (it submitted the same topology over the same store,
// acquiring a newer owner generation): every coordinator write, spout
// metadata write and state write of this process is then rejected, so it
// stops for good. It is never retried: only the newest owner commits.
var ErrSuperseded = state.ErrFenced

// ErrVolatileState is matched by Running.Err when a task opened state
// kept in memory only while Config.RequireDurableState was set.
var ErrVolatileState = exec.ErrVolatileState

// ErrAttemptLimit is matched by the error that halts a topology whose batch
// failed Config.MaxAttempts times.
var ErrAttemptLimit = runtime.ErrAttemptLimit

// ErrCountMismatch is reported when a batch's tuples did not all arrive.
var ErrCountMismatch = runtime.ErrCountMismatch
