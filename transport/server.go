package transport

import (
	"bufio"
	"context"
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
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serve(ctx, conn)
		}()
	}
}

// serve shakes hands with a peer, then reads and decodes frames and hands
// them to a delivery goroutine through a queue of ReceiveQueue frames.
func (s *Server) serve(ctx context.Context, conn net.Conn) {
	defer s.ended.Broadcast()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	defer conn.Close()
	log := s.log.With("remote", conn.RemoteAddr().String())

	conn.SetDeadline(time.Now().Add(s.cfg.HandshakeTimeout))
	peer, reason, err := serverHandshake(conn, &s.cfg)
	if err != nil || reason != "" {
		s.stats.refused.Add(1) // before the peer can read its refusal
		if err == nil {
			err = refuse(conn, &s.cfg, peer, reason)
		}
		log.Error("transport: handshake failed", "peer", peer, "err", err)
		return
	}
	conn.SetDeadline(time.Time{})
	if ctx.Err() != nil {
		return // accepted while the server was closing
	}
	log = log.With("peer", peer)
	log.Info("transport: peer connected")
	s.stats.active.Add(1)
	defer s.stats.active.Add(-1)

	full := make(chan *inFrame, s.cfg.ReceiveQueue)
	free := make(chan *inFrame, s.cfg.ReceiveQueue+2)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.deliver(ctx, cancel, log, peer, full, free)
	}()
	err = s.read(ctx, conn, full, free)
	close(full)
	wg.Wait()
	switch {
	case ctx.Err() != nil:
	case errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed):
		log.Info("transport: peer disconnected")
	case errors.Is(err, ErrBadFrame) || errors.Is(err, ErrFrameTooLarge):
		s.stats.badFrames.Add(1)
		log.Error("transport: frame rejected, closing the connection", "err", err)
	default:
		log.Warn("transport: connection lost", "err", err)
	}
}

// inFrame is one decoded frame on its way to the handler.
type inFrame struct{ msgs []Message }

// read reads and decodes frames until the connection ends, a frame is
// bad, or ctx ends; it blocks while the receive queue is full.
func (s *Server) read(ctx context.Context, conn net.Conn, full, free chan *inFrame) error {
	br := bufio.NewReaderSize(conn, 64<<10)
	dec := newDecoder(s.cfg.Types)
	var buf []byte
	for {
		var err error
		if buf, err = readFrame(br, buf, s.cfg.MaxFrameBytes); err != nil {
			return err
		}
		var f *inFrame
		select {
		case f = <-free:
		default:
			f = new(inFrame)
		}
		if f.msgs, err = dec.frame(buf, f.msgs[:0]); err != nil {
			return err
		}
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

// deliver hands each frame to the handler, one call per run of messages
// for one task (see grouper). A handler error cancels the connection.
func (s *Server) deliver(ctx context.Context, cancel context.CancelFunc, log *slog.Logger, peer string, full, free chan *inFrame) {
	var g grouper
	for f := range full {
		if ctx.Err() != nil {
			continue // drain: the reader is stopping
		}
		err := g.each(f.msgs, func(task TaskID, msgs []Message) error {
			return s.cfg.Handler.Deliver(ctx, peer, task, msgs)
		})
		if err != nil && ctx.Err() == nil {
			s.stats.handlerErrors.Add(1)
			log.Error("transport: handler failed, closing the connection", "err", err)
			cancel()
		}
		clear(f.msgs) // let the handler's values go
		select {
		case free <- f:
		default:
		}
	}
}

// Stats returns the server's counters.
func (s *Server) Stats() ServerStats {
	return ServerStats{
		Accepted: s.stats.accepted.Load(), Active: s.stats.active.Load(), Refused: s.stats.refused.Load(),
		Frames: s.stats.frames.Load(), Messages: s.stats.messages.Load(), Bytes: s.stats.bytes.Load(),
		BadFrames: s.stats.badFrames.Load(), HandlerErrors: s.stats.handlerErrors.Load(),
	}
}

type serverCounters struct {
	accepted, refused, frames, messages, bytes, badFrames, handlerErrors atomic.Uint64
	active                                                               atomic.Int64
}

// ServerStats are a Server's counters since it started.
type ServerStats struct {
	Accepted      uint64 // connections accepted
	Active        int64  // connections past the handshake, now
	Refused       uint64 // connections whose handshake failed
	Frames        uint64 // frames decoded
	Messages      uint64 // messages decoded
	Bytes         uint64 // bytes of the decoded frames
	BadFrames     uint64 // connections closed for a bad or oversized frame
	HandlerErrors uint64 // connections closed because the handler failed
}
