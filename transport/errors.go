package transport

import (
	"errors"
	"fmt"
	"reflect"
)

// Sentinel errors. Errors returned by this package wrap one of them, so
// callers branch with errors.Is. ErrClosed, ErrUnsupportedValue and
// ErrMessageTooLarge from Send are final for the call (retrying the same
// call fails again); a Send that returns the context's error may be
// retried. Connection-level errors (ErrBadFrame, ErrFrameTooLarge,
// ErrHandshake) never reach Send: the connection is closed, the error
// logged and counted, and the client reconnects with backoff.
var (
	// ErrClosed: the Client or Server was closed.
	ErrClosed = errors.New("transport: closed")
	// ErrInvalidConfig is wrapped by every error Validate returns.
	ErrInvalidConfig = errors.New("transport: invalid config")
	// ErrUnsupportedValue: a tuple value has a type the wire format
	// cannot carry (see the package comment); wrapped by *ValueError.
	ErrUnsupportedValue = errors.New("transport: unsupported value type")
	// ErrMessageTooLarge: one encoded message does not fit in a frame of
	// MaxFrameBytes.
	ErrMessageTooLarge = errors.New("transport: message larger than a frame")
	// ErrBadFrame: a frame could not be decoded; wrapped by *FrameError.
	ErrBadFrame = errors.New("transport: bad frame")
	// ErrFrameTooLarge: a frame's length prefix exceeds MaxFrameBytes;
	// wrapped by *FrameError.
	ErrFrameTooLarge = errors.New("transport: frame too large")
	// ErrHandshake: the peers did not agree on connect; wrapped by
	// *HandshakeError.
	ErrHandshake = errors.New("transport: handshake refused")
	// ErrOverBudget: decoding a frame would allocate more than its
	// budget (see FrameBudget); wrapped by *FrameError. Send refuses a
	// message that could not be decoded within the budget of a frame of
	// its own with ErrMessageTooLarge.
	ErrOverBudget = errors.New("transport: frame over its decoding budget")
	// ErrValuePanic: the decoder of a registered value type panicked;
	// wrapped by *FrameError. The frame is rejected, the process lives on.
	ErrValuePanic = errors.New("transport: value decoder panicked")
)

// ValueError reports a tuple value the wire format cannot carry.
type ValueError struct {
	Type   reflect.Type // the value's dynamic type
	Path   string       // where the value sits, e.g. `values[2]["k"]`
	Reason string       // empty when the type is not supported at all
}

func (e *ValueError) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("%v: %s (%v): %s", ErrUnsupportedValue, e.Path, e.Type, e.Reason)
	}
	return fmt.Sprintf("%v: %s is a %v", ErrUnsupportedValue, e.Path, e.Type)
}

func (e *ValueError) Unwrap() error { return ErrUnsupportedValue }

// FrameError reports a frame that was rejected. The connection that
// carried it is closed; nothing of the frame is delivered.
type FrameError struct {
	Size   int    // the frame's length prefix
	Reason string // what was wrong
	Err    error  // ErrBadFrame, ErrFrameTooLarge, ErrOverBudget or ErrValuePanic

	cause error // the decoding error Reason describes, if any
}

func (e *FrameError) Error() string {
	return fmt.Sprintf("%v (%d bytes): %s", e.Err, e.Size, e.Reason)
}

// Unwrap returns Err and, for a frame that did not decode, the error
// the decoder met.
func (e *FrameError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.cause}
}

// HandshakeError reports a peer that was refused on connect, by this side
// or by the other one.
type HandshakeError struct {
	Peer   string // the remote worker's id as it announced itself, if known
	Reason string // why, e.g. "topology \"a\" != \"b\""
	Remote bool   // the remote side refused (true) or this side did (false)
}

func (e *HandshakeError) Error() string {
	who := "local"
	if e.Remote {
		who = "remote"
	}
	peer := e.Peer
	if peer == "" {
		peer = "unknown worker"
	}
	return fmt.Sprintf("%v by %s side (peer %s): %s", ErrHandshake, who, peer, e.Reason)
}

func (e *HandshakeError) Unwrap() error { return ErrHandshake }

func badFrame(size int, format string, args ...any) *FrameError {
	return &FrameError{Size: size, Reason: fmt.Sprintf(format, args...), Err: ErrBadFrame}
}

// frameError turns a decoding error into a *FrameError of the sentinel
// it wraps: ErrOverBudget, ErrValuePanic, or else ErrBadFrame.
func frameError(size int, err error, where string) *FrameError {
	kind := ErrBadFrame
	switch {
	case errors.Is(err, ErrOverBudget):
		kind = ErrOverBudget
	case errors.Is(err, ErrValuePanic):
		kind = ErrValuePanic
	}
	return &FrameError{Size: size, Reason: where + ": " + err.Error(), Err: kind, cause: err}
}
