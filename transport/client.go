package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/squallstream/squall/internal/backoff"
	"github.com/squallstream/squall/internal/notify"
)

// Client sends messages to one remote worker over one connection: Send
// encodes them into a bounded queue, and a writer goroutine writes the
// queued frames, connecting and reconnecting with backoff as needed. It
// is safe for concurrent use.
//
// Delivery is at most once: messages are written in Send order and never
// retransmitted. Messages in a write that fails are counted as Lost; a
// write that succeeded may still be lost with the connection (TCP does not
// say what the peer read). Reliability is the acker's: a lost tuple or ack
// leaves its tree incomplete, the tree times out and the spout replays it.
type Client struct {
	cfg    ClientConfig
	tls    *tls.Config // cfg.TLS with its ServerName, or nil
	log    *slog.Logger
	q      *queue
	cancel context.CancelFunc
	wg     sync.WaitGroup
	done   chan struct{} // closed when the writer goroutine has stopped

	stats    clientCounters
	progress notify.Signal // broadcast after every write attempt and connection change
	lastErr  atomic.Pointer[errBox]
}

type errBox struct{ err error }

// NewClient starts a client for the worker at cfg.Addr. It returns at
// once; the connection is made in the background. The client stops when
// Close is called or ctx is done.
func NewClient(ctx context.Context, cfg ClientConfig) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	c := &Client{cfg: cfg, q: newQueue(cfg), done: make(chan struct{}),
		log: cfg.Logger.With("worker", cfg.Worker, "peer", cfg.Peer, "addr", cfg.Addr)}
	if cfg.TLS != nil {
		c.tls = cfg.TLS.Clone()
		if c.tls.ServerName == "" {
			if host, _, err := net.SplitHostPort(cfg.Addr); err == nil {
				c.tls.ServerName = host
			}
		}
	}
	ctx, c.cancel = context.WithCancel(ctx)
	c.wg.Add(1)
	go c.run(ctx)
	return c, nil
}

// Send queues msgs, in order, for the remote worker. It returns once every
// message is encoded and queued — not sent — blocking while the queue is
// full (backpressure), connected or not. It fails with ErrClosed after
// Close, with the context's error when ctx ends first, with a *ValueError
// for a value the wire format cannot carry, and with ErrMessageTooLarge
// for a message larger than a frame; on error, the messages before the
// failing one may have been queued, and will be sent.
func (c *Client) Send(ctx context.Context, msgs ...Message) error {
	return c.q.put(ctx, msgs)
}

// Flush waits until every message queued before the call has been
// written to the connection or lost (see ClientStats). It fails with the
// context's error when ctx ends first, and with ErrClosed when the client
// closes first.
func (c *Client) Flush(ctx context.Context) error {
	queued, _, _ := c.q.counts()
	for {
		wait := c.progress.Wait()
		if c.stats.sent.Load()+c.stats.lost.Load() >= queued {
			return nil
		}
		select {
		case <-wait:
		case <-c.done:
			return ErrClosed
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Close stops the client: blocked and later Sends fail with ErrClosed,
// the connection is closed, and Close returns once the client's
// goroutines have stopped. Messages still queued are dropped (counted in
// ClientStats.Dropped); Flush first to send them.
func (c *Client) Close() error {
	c.cancel()
	c.wg.Wait()
	return nil
}

// Err returns the error of the last failed connection attempt or of the
// last lost connection, or nil while connected.
func (c *Client) Err() error {
	if b := c.lastErr.Load(); b != nil {
		return b.err
	}
	return nil
}

func (c *Client) setErr(err error) {
	if err == nil {
		c.lastErr.Store(nil)
	} else {
		c.lastErr.Store(&errBox{err})
	}
	c.progress.Broadcast()
}

// run connects, writes until the connection breaks, and reconnects with
// backoff, until ctx ends.
func (c *Client) run(ctx context.Context) {
	defer c.wg.Done()
	defer close(c.done)
	defer func() {
		c.stats.dropped.Add(uint64(c.q.close()))
		c.progress.Broadcast()
	}()
	seq := backoff.Sequence{Backoff: backoff.New(int64(c.cfg.MinBackoff), int64(c.cfg.MaxBackoff), c.cfg.Seed)}
	var last *connected // the previous connection, nil before the first
	for {
		conn, raw, inc, err := c.connect(ctx)
		if ctx.Err() != nil {
			if raw != nil {
				raw.Close()
			}
			return
		}
		if err != nil {
			c.stats.connectFailures.Add(1)
			c.setErr(err)
			wait := time.Duration(seq.Next())
			level := slog.LevelWarn
			if errors.Is(err, ErrHandshake) {
				level = slog.LevelError
			}
			c.log.Log(ctx, level, "transport: connect failed", "err", err, "attempt", seq.Failures(), "retry_in", wait)
			t := c.cfg.Clock.NewTimer(wait)
			select {
			case <-t.C():
				continue
			case <-ctx.Done():
				t.Stop()
				return
			}
		}
		seq.Reset()
		c.stats.connects.Add(1)
		lost := c.stats.lost.Load()
		if last != nil {
			c.reconnected(Reconnect{Peer: c.cfg.Peer, Previous: last.incarnation, Incarnation: inc, Lost: lost - last.lost})
		} else {
			c.log.Info("transport: connected", "incarnation", inc)
		}
		last = &connected{incarnation: inc, lost: lost}
		c.setErr(nil)
		err = c.pump(ctx, conn, raw)
		if ctx.Err() != nil {
			return
		}
		c.setErr(err)
		c.log.Warn("transport: connection lost", "err", err)
	}
}

// connected is what the client remembers of a connection it made: the
// server's incarnation and the lost count when it was made.
type connected struct {
	incarnation string
	lost        uint64
}

// reconnected counts and logs a connection that replaced a lost one, and
// calls the Reconnected hook.
func (c *Client) reconnected(r Reconnect) {
	if r.Restarted() {
		c.stats.restarts.Add(1)
		c.log.Warn("transport: reconnected to a restarted peer", "incarnation", r.Incarnation, "previous", r.Previous, "lost", r.Lost)
	} else {
		c.log.Info("transport: reconnected", "incarnation", r.Incarnation, "lost", r.Lost)
	}
	if c.cfg.Reconnected != nil {
		c.cfg.Reconnected(r)
	}
}

// connect dials and shakes hands (TLS, VerifyPeer, the transport's),
// within ConnectTimeout. It returns the connection to write to, the
// underlying one, which closes both, and the server's incarnation.
func (c *Client) connect(ctx context.Context) (conn, raw net.Conn, incarnation string, err error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.ConnectTimeout)
	defer cancel()
	dialed, err := c.cfg.Dial(ctx, c.cfg.Addr)
	if err != nil {
		return nil, nil, "", err
	}
	// The closure holds its own variable: it may still run while a failed
	// connect's return statement clears the results.
	stop := context.AfterFunc(ctx, func() { dialed.Close() }) // unblocks the handshakes
	conn = dialed
	if c.tls != nil {
		tc := tls.Client(dialed, c.tls)
		if err = tc.HandshakeContext(ctx); err != nil {
			err = fmt.Errorf("transport: TLS handshake with %s: %w", c.cfg.Addr, err)
		} else if c.cfg.VerifyPeer != nil {
			if verr := c.cfg.VerifyPeer(tc.ConnectionState()); verr != nil {
				err = &HandshakeError{Peer: c.cfg.Peer, Reason: "VerifyPeer: " + verr.Error()}
			}
		}
		conn = tc
	}
	if err == nil {
		incarnation, err = clientHandshake(conn, &c.cfg)
	}
	if !stop() {
		err = errors.Join(err, ctx.Err())
	}
	if err != nil {
		dialed.Close()
		return nil, nil, "", err
	}
	return conn, dialed, incarnation, nil
}

// heartbeatFrame is an empty frame: written when the connection was
// silent for Heartbeat, so the server's IdleTimeout does not close it.
const heartbeatFrame = "\x00\x00\x00\x01\x90"

// pump writes queued frames to conn until a write fails, the peer closes
// the connection, or ctx ends, and a heartbeat whenever nothing was
// written for Heartbeat. It closes raw, the connection under conn.
func (c *Client) pump(ctx context.Context, conn, raw net.Conn) error {
	broken := make(chan error, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the server sends nothing after the handshake: any read ends the connection
		defer wg.Done()
		var b [1]byte
		_, err := conn.Read(b[:])
		if err == nil {
			err = errors.New("transport: unexpected data from the server")
		}
		broken <- err
	}()
	stop := context.AfterFunc(ctx, func() { raw.Close() }) // unblocks a blocked write
	heartbeat := c.cfg.Clock.NewTimer(c.cfg.Heartbeat)
	defer func() {
		heartbeat.Stop()
		stop()
		raw.Close()
		wg.Wait()
	}()
	for {
		b, msgs, frames := c.q.take()
		if b == nil {
			select {
			case <-c.q.ready:
				continue
			case <-heartbeat.C():
				if _, err := io.WriteString(conn, heartbeatFrame); err != nil {
					return err
				}
				c.stats.heartbeats.Add(1)
				heartbeat.Reset(c.cfg.Heartbeat)
				continue
			case err := <-broken:
				if err == io.EOF {
					err = errors.New("transport: the server closed the connection")
				}
				return err
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		_, err := conn.Write(b)
		heartbeat.Reset(c.cfg.Heartbeat)
		c.q.recycle(b)
		if err != nil {
			c.stats.lost.Add(uint64(msgs))
			c.progress.Broadcast()
			return err
		}
		c.stats.sent.Add(uint64(msgs))
		c.stats.frames.Add(uint64(frames))
		c.stats.bytes.Add(uint64(len(b)))
		c.progress.Broadcast()
	}
}

// Stats returns the client's counters.
func (c *Client) Stats() ClientStats {
	queued, _, waiting := c.q.counts()
	return ClientStats{
		Queued: queued, Sent: c.stats.sent.Load(), Lost: c.stats.lost.Load(), Dropped: c.stats.dropped.Load(),
		Frames: c.stats.frames.Load(), Bytes: c.stats.bytes.Load(), QueuedBytes: waiting,
		Connects: c.stats.connects.Load(), ConnectFailures: c.stats.connectFailures.Load(),
		Heartbeats: c.stats.heartbeats.Load(), Restarts: c.stats.restarts.Load(),
	}
}

type clientCounters struct {
	sent, lost, dropped, frames, bytes, connects, connectFailures, heartbeats, restarts atomic.Uint64
}

// ClientStats are a Client's counters since it started.
type ClientStats struct {
	Queued          uint64 // messages accepted by Send
	Sent            uint64 // messages written to a connection
	Lost            uint64 // messages in a write that failed: never retransmitted
	Dropped         uint64 // messages still queued when the client closed
	Frames          uint64 // frames written
	Bytes           uint64 // bytes written in frames
	QueuedBytes     int    // bytes waiting in the queue now
	Connects        uint64 // connections established
	ConnectFailures uint64 // failed connection attempts (dial, TLS or handshake)
	Heartbeats      uint64 // empty frames written on a silent connection
	// Restarts counts the connections that reached another incarnation
	// of the server than the connection before them (Reconnect.Restarted).
	Restarts uint64
}
