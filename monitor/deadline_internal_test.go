package monitor

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/internal/httpguard"
	"github.com/squallstream/squall/topology"
)

// slowStop is a topology whose Stop takes five seconds.
type slowStop struct{ done chan struct{} }

func (slowStop) Name() string                     { return "slow" }
func (slowStop) Stats() topology.Stats            { return topology.Stats{} }
func (slowStop) Health() topology.Health          { return topology.Health{Running: true} }
func (slowStop) Errors() []topology.ReportedError { return nil }
func (slowStop) Pending() int64                   { return 0 }
func (slowStop) Activate()                        {}
func (slowStop) Deactivate()                      {}
func (s slowStop) Done() <-chan struct{}          { return s.done }
func (s slowStop) Stop(context.Context) error {
	time.Sleep(5 * time.Second)
	close(s.done)
	return nil
}

// pipeListener serves net.Pipe connections inside a synctest bubble.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}
func (l *pipeListener) Close() error   { l.once.Do(func() { close(l.done) }); return nil }
func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

// A kill that waits for its topology longer than the server's
// WriteTimeout still answers: it moves its own write deadline.
func TestKillOutlastsWriteTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := NewRegistry()
		if err := reg.Add(slowStop{done: make(chan struct{})}, Options{}); err != nil {
			t.Fatal(err)
		}
		s, err := NewServer(reg, Config{Token: "t"})
		if err != nil {
			t.Fatal(err)
		}
		srv, err := httpguard.NewServer(s.Handler(), httpguard.ServerConfig{WriteTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		ln := &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
		served := make(chan struct{})
		go func() { defer close(served); _ = srv.Serve(ln) }()
		defer func() { _ = srv.Close(); <-served }()
		c, sc := net.Pipe()
		ln.conns <- sc
		defer c.Close()
		go io.WriteString(c, "POST /api/v1/topologies/slow/kill HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer t\r\nContent-Length: 0\r\n\r\n")
		start := time.Now()
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("the kill's answer was lost: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || time.Since(start) < 5*time.Second {
			t.Fatalf("kill: %d after %v", resp.StatusCode, time.Since(start))
		}
	})
}
