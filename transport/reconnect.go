package transport

import (
	"crypto/rand"
	"encoding/hex"
)

// Reconnect describes, to ClientConfig.Reconnected, a connection that
// replaced a lost one: whether the remote worker is still the process
// the lost connection reached, and what the client knows it lost.
//
// Delivery is at most once, so a lost connection may have lost messages
// either way; Restarted and Lost say when it certainly did. A server that
// restarted lost whatever it had received and not finished (the tuples in
// its executors, its ackers' trees); a write that failed lost its
// messages. What neither shows is a write that succeeded but that a
// surviving server never read before the connection broke: those
// messages are lost without a trace, and only the message timeout finds
// their trees.
type Reconnect struct {
	Peer string // the remote worker's id (ClientConfig.Peer)
	// Previous and Incarnation are the incarnations the server announced
	// on the lost connection and on this one (ServerConfig.Incarnation);
	// empty for a server that announced none.
	Previous, Incarnation string
	// Lost counts the messages lost in failed writes since the previous
	// connection was made.
	Lost uint64
}

// Restarted reports whether the server is not the process the lost
// connection reached: it announced another incarnation, or one of the two
// connections announced none, which cannot be told apart from a restart.
func (r Reconnect) Restarted() bool {
	return r.Previous == "" || r.Previous != r.Incarnation
}

// Lossy reports whether messages sent before this connection were
// certainly lost: the server restarted, or a write failed.
func (r Reconnect) Lossy() bool { return r.Restarted() || r.Lost > 0 }

// newIncarnation draws a server incarnation: 16 hex digits from
// crypto/rand, so two servers (or two lives of one worker) never share
// one in practice.
func newIncarnation() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand's contract)
	return hex.EncodeToString(b[:])
}
