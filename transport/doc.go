// Package transport moves tuples and acker messages between the worker
// processes of a topology in cluster mode: one TCP (or TLS) connection
// from each worker to each peer it sends to, carrying length-prefixed
// frames of msgpack-encoded messages.
//
// A Client is the sending end of one connection. Send encodes messages
// into a bounded queue of frames and returns; a writer goroutine writes
// whatever is queued in one write, so a busy connection moves large
// frames and an idle one sends at once (no timers). A full queue blocks
// Send (backpressure), whether or not the connection is up. The client
// connects in the background and reconnects with exponential, jittered
// backoff.
//
// A Server accepts connections, checks each peer's handshake (protocol
// version, topology id, worker ids), decodes frames and hands their
// messages to a Handler, one call per run of messages for one
// destination task (see Handler). A bounded queue
// of decoded frames per connection sits between reading and the
// handler: when the handler is slow the connection is not read, TCP's
// window closes and the sender's queue fills.
//
// # Delivery
//
// Messages on one connection arrive in the order they were sent, and at
// most once: a frame lost with a broken connection is not retransmitted.
// As in Storm, reliability is the acker's job: a lost tuple or ack leaves
// its tree incomplete, the tree times out, and the spout replays it; a
// lost worker's trees time out the same way. Bad input — a frame above
// the maximum size, a frame that does not decode, a failed handshake —
// closes that connection with a logged, counted error, and never brings
// the process down.
//
// # Security and budgets
//
// Nothing that arrives is trusted by default. With ServerConfig.TLS and
// ClientConfig.TLS the connections run over TLS (mutual TLS from one
// cluster CA, in a cluster); VerifyPeer checks a peer's TLS state before
// anything else is read from it. Decoding a frame may allocate at most
// FrameBudget of its size, and a connection's decoded frames at most
// ServerConfig.ConnBudget until the handler takes them. A server holds at
// most MaxConns connections, gives a peer HandshakeTimeout for TLS and
// handshake, and closes a connection idle for IdleTimeout (clients send
// heartbeats). Every refusal is logged by the server's own logger
// (slog.Default() unless set) with the remote address and a reason, and
// counted by reason (ServerStats.RefusedByReason). A registered value
// type's decoder that panics costs its frame and its connection, not the
// process.
//
// # Values
//
// Tuple values keep their Go type across the wire for this set: nil,
// bool, string, []byte, int, int8, int16, int32, int64, uint, uint8,
// uint16, uint32, uint64, float32, float64, time.Time, []any and
// map[string]any of these (nested at most 32 deep). A time.Time arrives
// in UTC with its instant intact; a nil []byte, []any or map arrives
// empty but non-nil. Other types — named types, structs, typed slices —
// are refused by Send with a *ValueError unless registered in a Types on
// both ends (Register), which is how Trident's coordination values
// travel.
//
// See docs/transport.md for the wire format, byte by byte.
package transport
