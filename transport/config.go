package transport

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/squallstream/squall/internal/clock"
)

// Defaults of the zero fields of ClientConfig and ServerConfig.
const (
	DefaultQueueBytes       = 1 << 20
	DefaultFrameMessages    = 1024
	DefaultFrameBytes       = 64 << 10
	DefaultMaxFrameBytes    = 16 << 20
	DefaultMinBackoff       = 100 * time.Millisecond
	DefaultMaxBackoff       = time.Second
	DefaultConnectTimeout   = 5 * time.Second
	DefaultReceiveQueue     = 4
	DefaultHandshakeTimeout = 5 * time.Second
	DefaultListenAddr       = "127.0.0.1:0"
	DefaultMaxConns         = 256
	DefaultIdleTimeout      = 2 * time.Minute
	DefaultHeartbeat        = 30 * time.Second
)

// maxIDBytes bounds topology and worker ids, so a handshake is small.
const maxIDBytes = 1024

// ClientConfig configures a Client, the sending end of the connection to
// one remote worker. Topology, Worker, Peer and Addr are required; every
// other zero field takes the default its comment gives.
type ClientConfig struct {
	Topology string // the topology both workers run
	Worker   string // this worker's id, announced on connect
	Peer     string // the remote worker's id: the server must announce it
	Addr     string // host:port of the remote worker's Server

	// QueueBytes bounds the encoded messages waiting to be written: Send
	// blocks while QueueBytes or more wait, connected or not. Zero means
	// 1 MiB.
	QueueBytes int
	// FrameMessages and FrameBytes bound one frame: a frame is closed when
	// it holds FrameMessages messages or FrameBytes bytes or more. Zero
	// means 1024 messages and 64 KiB.
	FrameMessages int
	FrameBytes    int
	// MaxFrameBytes is the largest frame body: a larger message is refused
	// by Send. It must not exceed the server's. Zero means 16 MiB.
	MaxFrameBytes int

	// MinBackoff and MaxBackoff bound the exponential, jittered wait
	// between failed connection attempts (Storm's netty min_wait_ms and
	// max_wait_ms). Zero means 100ms and 1s.
	MinBackoff, MaxBackoff time.Duration
	// ConnectTimeout bounds one attempt: dial, TLS and handshake. Zero
	// means 5s. It is measured by the system clock, like every network
	// timeout.
	ConnectTimeout time.Duration
	// Heartbeat is how long the connection may stay silent: when nothing
	// was written for Heartbeat, an empty frame is, so that the server's
	// IdleTimeout (2 minutes by default) does not close an idle
	// connection. It must be below the server's IdleTimeout. Zero means
	// 30s.
	Heartbeat time.Duration
	// Dial opens a connection. Nil means a net.Dialer over TCP.
	Dial func(ctx context.Context, addr string) (net.Conn, error)

	// TLS, when set, runs the connection over TLS with this
	// configuration (for mutual TLS it carries this worker's certificate
	// and the CA that signs the servers'). An empty ServerName is taken
	// from the host of Addr. Nil means plain TCP.
	TLS *tls.Config
	// VerifyPeer, when set, is called with the server's TLS state after
	// the TLS handshake and before the transport's handshake; an error
	// fails the connection attempt (retried with backoff). It needs TLS.
	VerifyPeer func(tls.ConnectionState) error

	// Types carries value types outside the built-in set. Nil means none.
	Types *Types
	// Logger receives connection events. Nil means slog.Default().
	Logger *slog.Logger
	// Clock times the backoff waits. Nil means the system clock.
	Clock clock.Clock
	// Seed seeds the backoff jitter. Zero means a seed derived from
	// Worker and Peer, so that clients of one worker do not retry in
	// lockstep and a run can be replayed.
	Seed uint64

	// Reconnected, when set, is called after every connection that
	// replaces a lost one (not after the first), on the client's writer
	// goroutine before anything is written on the new connection, with
	// whether the server is the process the lost connection reached and
	// how many messages were lost meanwhile (see Reconnect). It must not
	// block: nothing is written while it runs. Nil means no call.
	Reconnected func(Reconnect)
}

// ServerConfig configures a Server, the receiving end of a worker.
// Topology, Worker and Handler are required; every other zero field
// takes the default its comment gives.
type ServerConfig struct {
	Topology string // the topology this worker runs; peers of another are refused
	Worker   string // this worker's id; peers that expect another are refused

	// Addr is the address to listen on. Zero means 127.0.0.1:0 (loopback,
	// a free port; see Server.Addr).
	Addr string
	// Listener, when set, is used instead of listening on Addr; the
	// Server closes it.
	Listener net.Listener

	// Incarnation identifies this server's life to its clients: it is
	// announced in every handshake, so a client that reconnects can tell
	// a peer that restarted (and lost what it held) from the one it lost
	// the connection to (Reconnect). Give each Server its own; at most
	// 1024 bytes. Empty means 16 hex digits drawn from crypto/rand when
	// the server starts (Server.Incarnation).
	Incarnation string

	// Handler receives the messages.
	Handler Handler
	// ReceiveQueue is the number of decoded frames waiting for the
	// handler per connection; when it is full the connection is not read
	// and TCP pushes back on the sender. Zero means 4.
	ReceiveQueue int
	// MaxFrameBytes is the largest frame body accepted; a larger length
	// prefix closes the connection. Zero means 16 MiB.
	MaxFrameBytes int
	// ConnBudget bounds the bytes the decoded frames of one connection
	// hold until the handler has taken them: a frame reserves its
	// FrameBudget before it is decoded and keeps what decoding it was
	// charged until it is delivered; the connection is not read while the
	// next frame does not fit (as when the receive queue is full), unless
	// nothing is held. Zero means DecodeRatio × MaxFrameBytes (64 MiB).
	ConnBudget int
	// MaxConns bounds the connections open at once, handshakes included:
	// one more is closed as soon as it is accepted. Zero means 256.
	MaxConns int
	// HandshakeTimeout bounds the time from accepting a connection to the
	// end of its handshakes, TLS and the transport's, by the system
	// clock. Zero means 5s.
	HandshakeTimeout time.Duration
	// IdleTimeout closes a connection that brings no complete frame (a
	// client's heartbeat counts) for this long, by the system clock. Zero
	// means 2 minutes.
	IdleTimeout time.Duration

	// TLS, when set, makes the server speak TLS only, with this
	// configuration: for mutual TLS it carries this worker's certificate,
	// ClientAuth tls.RequireAndVerifyClientCert and the CA that signs the
	// peers' certificates in ClientCAs. A connection that fails the TLS
	// handshake is refused. Nil means plain TCP.
	TLS *tls.Config
	// VerifyPeer, when set, is called with a peer's TLS state after the
	// TLS handshake and before anything else is read from it; an error
	// refuses the peer (the connection is closed, logged and counted
	// under ReasonPeer). It is where a cluster checks that the peer is a
	// worker of this topology. It needs TLS.
	VerifyPeer func(tls.ConnectionState) error

	// Types carries value types outside the built-in set. Nil means none.
	Types *Types
	// Logger receives connection events, refused connections and
	// rejected frames. Nil means slog.Default(): refusals are never
	// silent.
	Logger *slog.Logger
	// Clock times the waits after a failed Accept. Nil means the system
	// clock.
	Clock clock.Clock
}

type problems []error

func (p *problems) add(format string, args ...any) {
	*p = append(*p, fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...))
}

func (p *problems) id(name, v string) {
	if v == "" || len(v) > maxIDBytes {
		p.add("%s is %q; it must be 1 to %d bytes", name, v, maxIDBytes)
	}
}

func (p *problems) positive(name string, v int) {
	if v < 0 {
		p.add("%s is %d; it must be positive (or zero for the default)", name, v)
	}
}

// Validate reports every invalid field.
func (c ClientConfig) Validate() error {
	var p problems
	p.id("Topology", c.Topology)
	p.id("Worker", c.Worker)
	p.id("Peer", c.Peer)
	if c.Addr == "" {
		p.add("Addr is empty")
	}
	p.positive("QueueBytes", c.QueueBytes)
	p.positive("FrameMessages", c.FrameMessages)
	p.positive("FrameBytes", c.FrameBytes)
	p.positive("MaxFrameBytes", c.MaxFrameBytes)
	if c.MinBackoff < 0 || c.MaxBackoff < 0 || c.ConnectTimeout < 0 || c.Heartbeat < 0 {
		p.add("durations must not be negative (MinBackoff %v, MaxBackoff %v, ConnectTimeout %v, Heartbeat %v)",
			c.MinBackoff, c.MaxBackoff, c.ConnectTimeout, c.Heartbeat)
	}
	if c.VerifyPeer != nil && c.TLS == nil {
		p.add("VerifyPeer is set without TLS")
	}
	d := c.withDefaults()
	if d.MaxFrameBytes < 64 || d.MaxFrameBytes > 1<<31-1 {
		p.add("MaxFrameBytes is %d; it must be 64 to 2^31-1", d.MaxFrameBytes)
	}
	if d.FrameBytes > d.MaxFrameBytes {
		p.add("FrameBytes %d is above MaxFrameBytes %d", d.FrameBytes, d.MaxFrameBytes)
	}
	if d.MinBackoff > d.MaxBackoff {
		p.add("MinBackoff %v is above MaxBackoff %v", d.MinBackoff, d.MaxBackoff)
	}
	return errors.Join(p...)
}

func (c ClientConfig) withDefaults() ClientConfig {
	c.QueueBytes = cmp.Or(c.QueueBytes, DefaultQueueBytes)
	c.FrameMessages = cmp.Or(c.FrameMessages, DefaultFrameMessages)
	c.FrameBytes = cmp.Or(c.FrameBytes, DefaultFrameBytes)
	c.MaxFrameBytes = cmp.Or(c.MaxFrameBytes, DefaultMaxFrameBytes)
	c.MinBackoff = cmp.Or(c.MinBackoff, DefaultMinBackoff)
	c.MaxBackoff = cmp.Or(c.MaxBackoff, max(DefaultMaxBackoff, c.MinBackoff))
	c.ConnectTimeout = cmp.Or(c.ConnectTimeout, DefaultConnectTimeout)
	c.Heartbeat = cmp.Or(c.Heartbeat, DefaultHeartbeat)
	if c.Dial == nil {
		var d net.Dialer
		c.Dial = func(ctx context.Context, addr string) (net.Conn, error) { return d.DialContext(ctx, "tcp", addr) }
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	c.Clock = clock.Or(c.Clock)
	if c.Seed == 0 {
		c.Seed = seedOf(c.Worker + "\x00" + c.Peer)
	}
	return c
}

// Validate reports every invalid field.
func (c ServerConfig) Validate() error {
	var p problems
	p.id("Topology", c.Topology)
	p.id("Worker", c.Worker)
	if len(c.Incarnation) > maxIDBytes {
		p.add("Incarnation is %d bytes; it must be at most %d", len(c.Incarnation), maxIDBytes)
	}
	if c.Handler == nil {
		p.add("Handler is nil")
	}
	p.positive("ReceiveQueue", c.ReceiveQueue)
	p.positive("MaxFrameBytes", c.MaxFrameBytes)
	p.positive("ConnBudget", c.ConnBudget)
	p.positive("MaxConns", c.MaxConns)
	if c.HandshakeTimeout < 0 || c.IdleTimeout < 0 {
		p.add("durations must not be negative (HandshakeTimeout %v, IdleTimeout %v)", c.HandshakeTimeout, c.IdleTimeout)
	}
	if c.VerifyPeer != nil && c.TLS == nil {
		p.add("VerifyPeer is set without TLS")
	}
	if d := c.withDefaults(); d.MaxFrameBytes < 64 || d.MaxFrameBytes > 1<<31-1 {
		p.add("MaxFrameBytes is %d; it must be 64 to 2^31-1", d.MaxFrameBytes)
	}
	return errors.Join(p...)
}

func (c ServerConfig) withDefaults() ServerConfig {
	c.Addr = cmp.Or(c.Addr, DefaultListenAddr)
	c.ReceiveQueue = cmp.Or(c.ReceiveQueue, DefaultReceiveQueue)
	c.MaxFrameBytes = cmp.Or(c.MaxFrameBytes, DefaultMaxFrameBytes)
	c.HandshakeTimeout = cmp.Or(c.HandshakeTimeout, DefaultHandshakeTimeout)
	c.ConnBudget = cmp.Or(c.ConnBudget, DecodeRatio*c.MaxFrameBytes)
	c.MaxConns = cmp.Or(c.MaxConns, DefaultMaxConns)
	c.IdleTimeout = cmp.Or(c.IdleTimeout, DefaultIdleTimeout)
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	c.Clock = clock.Or(c.Clock)
	return c
}

// seedOf hashes s (FNV-1a) into a non-zero seed.
func seedOf(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * 1099511628211
	}
	return h | 1
}
