package coordstore

import (
	"errors"
	"fmt"

	"github.com/squallstream/squall/state"
)

var (
	// ErrConflict is matched by the error of a SwapCoordinator whose
	// expected version is not the stored one: another coordinator wrote the
	// record. It is fatal: the coordinator that gets it must stop.
	ErrConflict = errors.New("coordstore: version conflict")
	// ErrCorrupt is matched by the errors of stored data that cannot be
	// decoded. It is fatal: an operator must look at the store.
	ErrCorrupt = errors.New("coordstore: corrupt data")
	// ErrInvalid is matched by the errors of invalid arguments.
	ErrInvalid = errors.New("coordstore: invalid argument")
	// ErrClosed is returned by a closed store.
	ErrClosed = errors.New("coordstore: store is closed")
	// ErrFenced is matched by the error of a write made with a generation
	// older than the owner's newest: another process took the topology
	// over. It is fatal and final: the superseded process must stop.
	ErrFenced = state.ErrFenced
)

// Fenced returns the error of a write by f to where, rejected because
// current, not f's, is the newest generation of its owner.
func Fenced(where string, f Fence, current Generation) error {
	return &state.FencedError{Where: "coordstore: " + where, Fence: f, Current: current}
}

// ConflictError is a failed SwapCoordinator.
type ConflictError struct {
	Stream string  // the owner
	Want   Version // the version the caller expected
	Have   Version // the stored version (0: no record)
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("coordstore: version conflict on stream %q: expected version %d, found %d (another coordinator owns the stream)",
		e.Stream, e.Want, e.Have)
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// CorruptError describes stored data that cannot be decoded.
type CorruptError struct {
	Where string // what was being read, for example "meta s/p txid 7"
	Err   error  // what is wrong with it
}

func (e *CorruptError) Error() string {
	return "coordstore: corrupt data in " + e.Where + ": " + e.Err.Error()
}

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// Unwrap returns the cause.
func (e *CorruptError) Unwrap() error { return e.Err }
