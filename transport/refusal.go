package transport

import (
	"errors"
	"io"
	"net"
	"os"
	"sync/atomic"
)

// Why a Server refused a connection or closed one, as counted by
// ServerStats.RefusedByReason and logged with the remote address. A
// metrics layer exports them as squall_transport_refused_total{reason}.
const (
	ReasonConnCap          = "conn_cap"          // MaxConns connections were open: closed at once
	ReasonTLS              = "tls"               // the TLS handshake failed (no or a bad certificate, not TLS)
	ReasonPeer             = "peer"              // VerifyPeer refused the peer's TLS state
	ReasonHandshake        = "handshake"         // the transport's handshake was refused or malformed
	ReasonHandshakeTimeout = "handshake_timeout" // TLS and handshake took longer than HandshakeTimeout
	ReasonIdle             = "idle"              // no frame, not even a heartbeat, for IdleTimeout
	ReasonFrameSize        = "frame_size"        // a length prefix above MaxFrameBytes
	ReasonBudget           = "budget"            // a frame over its decoding budget (FrameBudget)
	ReasonDecode           = "decode"            // a frame that does not decode
	ReasonPanic            = "panic"             // a registered value type's decoder panicked
)

// reason indexes the counters of the reasons above.
type reason uint8

const (
	rConnCap reason = iota
	rTLS
	rPeer
	rHandshake
	rHandshakeTimeout
	rIdle
	rFrameSize
	rBudget
	rDecode
	rPanic
	numReasons
)

func (r reason) String() string {
	return [numReasons]string{ReasonConnCap, ReasonTLS, ReasonPeer, ReasonHandshake,
		ReasonHandshakeTimeout, ReasonIdle, ReasonFrameSize, ReasonBudget, ReasonDecode, ReasonPanic}[r]
}

// beforeHandshake reports whether r refuses a connection before it
// delivers anything (ServerStats.Refused) rather than closing one that
// did.
func (r reason) beforeHandshake() bool { return r <= rHandshakeTimeout }

// Reasons returns every reason a Server counts, in a fixed order, so a
// metrics layer can export each from the start.
func Reasons() []string {
	out := make([]string, numReasons)
	for r := range numReasons {
		out[r] = r.String()
	}
	return out
}

// reasonCounters counts refusals by reason.
type reasonCounters [numReasons]atomic.Uint64

func (c *reasonCounters) snapshot() (out [numReasons]uint64) {
	for i := range c {
		out[i] = c[i].Load()
	}
	return out
}

// frameReason classifies an error that ended a connection after its
// handshake; ok is false for an ordinary end (the peer closed, or the
// connection broke).
func frameReason(err error) (r reason, ok bool) {
	switch {
	case errors.Is(err, ErrFrameTooLarge):
		return rFrameSize, true
	case errors.Is(err, ErrOverBudget):
		return rBudget, true
	case errors.Is(err, ErrValuePanic):
		return rPanic, true
	case errors.Is(err, ErrBadFrame):
		return rDecode, true
	case isTimeout(err):
		return rIdle, true
	}
	return 0, false
}

// isTimeout reports whether err is a deadline that passed.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// isClosed reports whether err is the ordinary end of a connection.
func isClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed)
}
