package transport

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/squallstream/squall/internal/backoff"
	"github.com/squallstream/squall/internal/notify"
)

// Handler receives the messages of a Server. Deliver is called with
// messages of one frame for one destination task, in the order they were
// sent: once per run of consecutive messages for one task, or, for a
// frame of more than 16 such runs, once per task with all of the frame's
// messages for it. Calls come from one goroutine per connection, in frame
// order, so a task's messages arrive in the order they were sent; calls
// for different connections may run concurrently. Deliver may block — the
// connection is not read meanwhile beyond the receive queue, which pushes
// back on the sender — but must return when ctx ends. A non-nil error
// closes the connection: the messages of frames not yet delivered are
// lost, and their trees time out.
//
// The msgs slice is reused after Deliver returns; the messages' Values
// and Anchors are not, and may be kept.
type Handler interface {
	Deliver(ctx context.Context, from string, task TaskID, msgs []Message) error
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, from string, task TaskID, msgs []Message) error

// Deliver calls f.
func (f HandlerFunc) Deliver(ctx context.Context, from string, task TaskID, msgs []Message) error {
	return f(ctx, from, task, msgs)
}

// Server accepts connections from peer workers and delivers the messages
// they send to its Handler.
type Server struct {
	cfg    ServerConfig
	log    *slog.Logger
	ln     net.Listener
	cancel context.CancelFunc
	wg     sync.WaitGroup
	open   atomic.Int64 // connections accepted and not yet closed
	stats  serverCounters
	ended  notify.Signal // broadcast when a connection ends, its counts final
}

// Listen starts a server on cfg.Addr (or cfg.Listener). The server stops
// when Close is called or ctx is done.
func Listen(ctx context.Context, cfg ServerConfig) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if cfg.Incarnation == "" {
		cfg.Incarnation = newIncarnation()
	}
	ln := cfg.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", cfg.Addr); err != nil {
			return nil, fmt.Errorf("transport: listen: %w", err)
		}
	}
	s := &Server{cfg: cfg, ln: ln,
		log: cfg.Logger.With("worker", cfg.Worker, "listen", ln.Addr().String())}
	ctx, s.cancel = context.WithCancel(ctx)
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer stop()
		s.accept(ctx)
	}()
	return s, nil
}

// Addr returns the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Incarnation returns the incarnation the server announces to its clients
// (ServerConfig.Incarnation, or the one drawn at Listen).
func (s *Server) Incarnation() string { return s.cfg.Incarnation }

// Close stops the server: the listener and every connection are closed,
// and Close returns once the server's goroutines have stopped (which
// includes waiting for Handler calls to return).
func (s *Server) Close() error {
	s.cancel()
	s.wg.Wait()
	return nil
}

func (s *Server) accept(ctx context.Context) {
	seq := backoff.Sequence{Backoff: backoff.Exponential(int64(5*time.Millisecond), int64(time.Second))}
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			wait := time.Duration(seq.Next())
			s.log.Error("transport: accept failed", "err", err, "retry_in", wait)
			t := s.cfg.Clock.NewTimer(wait)
			select {
			case <-t.C():
				continue
			case <-ctx.Done():
				t.Stop()
				return
			}
		}
		seq.Reset()
		s.stats.accepted.Add(1)
		if n := s.open.Add(1); n > int64(s.cfg.MaxConns) {
			s.open.Add(-1)
			s.refused(s.log.With("remote", remoteOf(conn)), rConnCap,
				fmt.Errorf("%d connections are open, MaxConns is %d", n-1, s.cfg.MaxConns))
			conn.Close()
			s.ended.Broadcast()
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.open.Add(-1)
			s.serve(ctx, conn)
		}()
	}
}

// refused counts and logs a refused or closed connection. A refusal is
// counted before the peer can learn of it, so a peer that reads its
// refusal always finds it in the statistics.
func (s *Server) refused(log *slog.Logger, r reason, err error) {
	s.stats.reasons[r].Add(1)
	if r.beforeHandshake() {
		s.stats.refused.Add(1)
	} else if r != rIdle {
		s.stats.badFrames.Add(1)
	}
	level := slog.LevelError
	if r == rIdle {
		level = slog.LevelWarn
	}
	attrs := []any{"reason", r.String(), "err", err}
	var vp *valuePanic
	if errors.As(err, &vp) {
		attrs = append(attrs, "stack", string(vp.stack))
	}
	log.Log(context.Background(), level, "transport: connection refused", attrs...)
}

func remoteOf(c net.Conn) string {
	if a := c.RemoteAddr(); a != nil {
		return a.String()
	}
	return "unknown"
}

// serve shakes hands with a peer, then reads and decodes frames and hands
// them to a delivery goroutine through a queue of ReceiveQueue frames.
func (s *Server) serve(ctx context.Context, raw net.Conn) {
	defer s.ended.Broadcast()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { raw.Close() })
	defer stop()
	defer raw.Close()
	log := s.log.With("remote", remoteOf(raw))

	conn, peer, r, err := s.handshake(ctx, raw)
	if err != nil {
		if ctx.Err() == nil && err != errRefusedAlready {
			s.refused(log.With("peer", peer), r, err)
		}
		return
	}
	if ctx.Err() != nil {
		return // accepted while the server was closing
	}
	log = log.With("peer", peer)
	log.Info("transport: peer connected")
	s.stats.active.Add(1)
	defer s.stats.active.Add(-1)

	full := make(chan *inFrame, s.cfg.ReceiveQueue)
	free := make(chan *inFrame, s.cfg.ReceiveQueue+2)
	mem := &connBudget{limit: s.cfg.ConnBudget}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.deliver(ctx, cancel, log, peer, full, free, mem)
	}()
	err = s.read(ctx, conn, full, free, mem)
	close(full)
	wg.Wait()
	if ctx.Err() != nil {
		return
	}
	if r, ok := frameReason(err); ok {
		s.refused(log, r, err)
		return
	}
	if isClosed(err) {
		log.Info("transport: peer disconnected")
		return
	}
	log.Warn("transport: connection lost", "err", err)
}

// handshake runs the TLS handshake (with TLS), VerifyPeer and the
// transport's handshake, all within HandshakeTimeout. It returns the
// connection to read frames from, or why the peer is refused. A
// transport-level refusal is counted, then answered.
func (s *Server) handshake(ctx context.Context, raw net.Conn) (conn net.Conn, peer string, r reason, err error) {
	raw.SetDeadline(time.Now().Add(s.cfg.HandshakeTimeout))
	conn = raw
	timedOut := func(r reason, err error) (net.Conn, string, reason, error) {
		if isTimeout(err) {
			r = rHandshakeTimeout
		}
		return nil, peer, r, err
	}
	if s.cfg.TLS != nil {
		tc := tls.Server(raw, s.cfg.TLS)
		if err := tc.HandshakeContext(ctx); err != nil {
			return timedOut(rTLS, fmt.Errorf("TLS handshake: %w", err))
		}
		if s.cfg.VerifyPeer != nil {
			if err := s.cfg.VerifyPeer(tc.ConnectionState()); err != nil {
				return nil, "", rPeer, fmt.Errorf("VerifyPeer: %w", err)
			}
		}
		conn = tc
	}
	peer, why, err := serverHandshake(conn, &s.cfg)
	if err != nil {
		return timedOut(rHandshake, fmt.Errorf("handshake: %w", err))
	}
	if why != "" {
		s.refused(s.log.With("remote", remoteOf(raw), "peer", peer), rHandshake, &HandshakeError{Peer: peer, Reason: why})
		refuse(conn, &s.cfg, peer, why)
		return nil, peer, 0, errRefusedAlready
	}
	raw.SetDeadline(time.Time{})
	return conn, peer, 0, nil
}

// errRefusedAlready marks a refusal that handshake counted and logged
// itself, before answering it.
var errRefusedAlready = errors.New("refused")

// inFrame is one decoded frame on its way to the handler, with what it
// was charged against its connection's budget.
type inFrame struct {
	msgs    []Message
	charged int
}

// maxFreeMessages bounds the message slots a free frame keeps for reuse;
// a frame that held more gives them to the garbage collector.
const maxFreeMessages = 4 * DefaultFrameMessages

// read reads and decodes frames until the connection ends, a frame is
// bad, the connection stays idle too long, or ctx ends; it blocks while
// the receive queue is full or the connection's budget is held.
func (s *Server) read(ctx context.Context, conn net.Conn, full, free chan *inFrame, mem *connBudget) error {
	br := bufio.NewReaderSize(conn, 64<<10)
	dec := newDecoder(s.cfg.Types)
	var buf []byte
	for {
		if err := conn.SetReadDeadline(time.Now().Add(s.cfg.IdleTimeout)); err != nil {
			return err
		}
		var err error
		if buf, err = readFrame(br, buf, s.cfg.MaxFrameBytes); err != nil {
			return err
		}
		reserved := FrameBudget(len(buf))
		if err := mem.acquire(ctx, reserved); err != nil {
			return err
		}
		var f *inFrame
		select {
		case f = <-free:
		default:
			f = new(inFrame)
		}
		f.msgs, err = dec.frame(buf, f.msgs[:0])
		mem.release(reserved - dec.charged)
		if err != nil {
			mem.release(dec.charged)
			return err
		}
		if len(f.msgs) == 0 { // a heartbeat
			mem.release(dec.charged)
			s.stats.heartbeats.Add(1)
			s.recycle(f, free)
			continue
		}
		f.charged = dec.charged
		s.stats.frames.Add(1)
		s.stats.messages.Add(uint64(len(f.msgs)))
		s.stats.bytes.Add(uint64(lenPrefix + len(buf)))
		select {
		case full <- f:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// recycle clears f and offers it for reuse.
func (s *Server) recycle(f *inFrame, free chan *inFrame) {
	clear(f.msgs) // let the handler's values go
	if cap(f.msgs) > maxFreeMessages {
		f.msgs = nil
	}
	select {
	case free <- f:
	default:
	}
}

// deliver hands each frame to the handler, one call per run of messages
// for one task (see grouper). A handler error cancels the connection.
func (s *Server) deliver(ctx context.Context, cancel context.CancelFunc, log *slog.Logger, peer string, full, free chan *inFrame, mem *connBudget) {
	var g grouper
	for f := range full {
		if ctx.Err() == nil {
			err := g.each(f.msgs, func(task TaskID, msgs []Message) error {
				return s.cfg.Handler.Deliver(ctx, peer, task, msgs)
			})
			if err != nil && ctx.Err() == nil {
				s.stats.handlerErrors.Add(1)
				log.Error("transport: handler failed, closing the connection", "err", err)
				cancel()
			}
		} // else drain: the reader is stopping
		mem.release(f.charged)
		s.recycle(f, free)
	}
}

// Stats returns the server's counters.
func (s *Server) Stats() ServerStats {
	return ServerStats{
		Accepted: s.stats.accepted.Load(), Active: s.stats.active.Load(), Refused: s.stats.refused.Load(),
		Frames: s.stats.frames.Load(), Messages: s.stats.messages.Load(), Bytes: s.stats.bytes.Load(),
		Heartbeats: s.stats.heartbeats.Load(),
		BadFrames:  s.stats.badFrames.Load(), HandlerErrors: s.stats.handlerErrors.Load(),
		reasons: s.stats.reasons.snapshot(),
	}
}

// RefusedByReason returns the connections the server refused or closed,
// by reason (the Reason constants; every reason is present): the same
// as Stats().RefusedByReason().
func (s *Server) RefusedByReason() map[string]uint64 { return s.Stats().RefusedByReason() }

type serverCounters struct {
	accepted, refused, frames, messages, bytes, heartbeats, badFrames, handlerErrors atomic.Uint64
	active                                                                           atomic.Int64
	reasons                                                                          reasonCounters
}

// ServerStats are a Server's counters since it started.
type ServerStats struct {
	Accepted      uint64 // connections accepted
	Active        int64  // connections past the handshake, now
	Refused       uint64 // connections refused before or during the handshake (cap, TLS, VerifyPeer, handshake, its timeout)
	Frames        uint64 // frames decoded, heartbeats aside
	Messages      uint64 // messages decoded
	Bytes         uint64 // bytes of the decoded frames
	Heartbeats    uint64 // empty frames received (a client's heartbeats)
	BadFrames     uint64 // connections closed for a bad, oversized or over-budget frame, or a panicking value decoder
	HandlerErrors uint64 // connections closed because the handler failed

	reasons [numReasons]uint64
}

// RefusedByReason returns the connections refused (Refused), closed for a
// bad frame (BadFrames) or closed for being idle, by reason: every Reason
// constant is a key, with zero when it never happened.
func (st ServerStats) RefusedByReason() map[string]uint64 {
	out := make(map[string]uint64, numReasons)
	for r := range numReasons {
		out[r.String()] = st.reasons[r]
	}
	return out
}
