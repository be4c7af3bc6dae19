package httpguard_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/internal/httpguard"
)

func TestNewServerSetsEveryBudget(t *testing.T) {
	srv, err := httpguard.NewServer(http.NotFoundHandler(), httpguard.ServerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if srv.ReadHeaderTimeout != httpguard.DefaultReadHeaderTimeout || srv.ReadTimeout != httpguard.DefaultReadTimeout ||
		srv.WriteTimeout != httpguard.DefaultWriteTimeout || srv.IdleTimeout != httpguard.DefaultIdleTimeout ||
		srv.MaxHeaderBytes != httpguard.DefaultMaxHeaderBytes || srv.ErrorLog == nil {
		t.Fatalf("defaults: %+v", srv)
	}
	cfg := httpguard.ServerConfig{ReadHeaderTimeout: time.Second, ReadTimeout: 2 * time.Second,
		WriteTimeout: 3 * time.Second, IdleTimeout: 4 * time.Second, MaxHeaderBytes: 5}
	srv, err = httpguard.NewServer(http.NotFoundHandler(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if srv.ReadHeaderTimeout != time.Second || srv.ReadTimeout != 2*time.Second || srv.WriteTimeout != 3*time.Second ||
		srv.IdleTimeout != 4*time.Second || srv.MaxHeaderBytes != 5 {
		t.Fatalf("configured: %+v", srv)
	}
	for _, bad := range []httpguard.ServerConfig{{ReadTimeout: -1}, {WriteTimeout: -1}, {IdleTimeout: -1},
		{ReadHeaderTimeout: -1}, {MaxHeaderBytes: -1}} {
		if _, err := httpguard.NewServer(http.NotFoundHandler(), bad); !errors.Is(err, httpguard.ErrInvalid) {
			t.Errorf("%+v: %v, want ErrInvalid", bad, err)
		}
	}
}

// serveInBubble serves h with cfg on a pipe listener and stops it at the
// end of the bubble's test.
func serveInBubble(t *testing.T, h http.Handler, cfg httpguard.ServerConfig) *pipeListener {
	t.Helper()
	srv, err := httpguard.NewServer(h, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln := newPipeListener()
	served := make(chan struct{})
	go func() { defer close(served); _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close(); <-served })
	return ln
}

// A client that trickles its body (a byte a second) is cut at
// ReadTimeout from the start of its request.
func TestSlowBodyCutByReadTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		type result struct {
			n       int64
			err     error
			elapsed time.Duration
		}
		got := make(chan result, 1)
		start := time.Now()
		ln := serveInBubble(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n, err := io.Copy(io.Discard, r.Body)
			got <- result{n, err, time.Since(start)}
		}), httpguard.ServerConfig{ReadTimeout: 5 * time.Second, WriteTimeout: time.Hour})
		c := ln.dial()
		stop, stopped := make(chan struct{}), make(chan struct{})
		defer func() { close(stop); c.Close(); <-stopped }()
		go func() {
			defer close(stopped)
			if _, err := io.WriteString(c, "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n"); err != nil {
				return
			}
			for range 1000 {
				if _, err := c.Write([]byte("x")); err != nil {
					return
				}
				select {
				case <-time.After(time.Second):
				case <-stop:
					return
				}
			}
		}()
		r := <-got
		if r.err == nil || r.n >= 1000 {
			t.Fatalf("the trickled body was read whole: %d bytes, %v", r.n, r.err)
		}
		if r.elapsed < 5*time.Second || r.elapsed > 6*time.Second {
			t.Fatalf("cut after %v, want the 5 s ReadTimeout", r.elapsed)
		}
	})
}

// An idle keep-alive connection is closed at IdleTimeout (not at
// ReadTimeout, which net/http would use without it).
func TestIdleConnectionClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ln := serveInBubble(t, &ok{}, httpguard.ServerConfig{IdleTimeout: 3 * time.Second, ReadTimeout: 20 * time.Second})
		c := ln.dial()
		defer c.Close()
		go io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.Close {
			t.Fatal("the server did not keep the connection alive")
		}
		idle := time.Now()
		if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
			t.Fatalf("idle connection: %v, want EOF", err)
		}
		if d := time.Since(idle); d < 3*time.Second || d > 4*time.Second {
			t.Fatalf("closed after %v idle, want the 3 s IdleTimeout", d)
		}
	})
}

// A handler slower than WriteTimeout loses its answer, unless its route
// extends its deadline (Guard.Deadlines).
func TestWriteTimeoutAndDeadlines(t *testing.T) {
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(5 * time.Second)
		_, _ = w.Write([]byte("late"))
	})
	g, rec := newGuard()
	for _, tc := range []struct {
		name string
		h    http.Handler
		want bool
	}{
		{"default", slow, false},
		{"extended", g.Deadlines(0, 10*time.Second)(slow), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ln := serveInBubble(t, tc.h, httpguard.ServerConfig{WriteTimeout: 2 * time.Second})
				c := ln.dial()
				defer c.Close()
				go io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
				resp, err := http.ReadResponse(bufio.NewReader(c), nil)
				if !tc.want {
					if err == nil {
						t.Fatalf("the answer came after WriteTimeout: %d", resp.StatusCode)
					}
					return
				}
				if err != nil {
					t.Fatalf("extended: %v", err)
				}
				b, _ := io.ReadAll(resp.Body)
				if string(b) != "late" {
					t.Fatalf("extended: %q", b)
				}
			})
		})
	}
	if len(rec.records()) != 0 {
		t.Fatalf("deadlines could not be extended: %v", rec.records())
	}
}

// LimitListener holds at most n connections; closing one lets the next
// in.
func TestLimitListener(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := newPipeListener()
		ln := httpguard.LimitListener(inner, 1)
		accepted := make(chan io.Closer, 2)
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				accepted <- c
			}
		}()
		c1 := inner.dial()
		defer c1.Close()
		first := <-accepted
		go func() {
			c2 := inner.dial()
			defer c2.Close()
		}()
		synctest.Wait()
		select {
		case <-accepted:
			t.Fatal("a second connection was accepted over the limit of 1")
		default:
		}
		first.Close()
		second := <-accepted
		second.Close()
		ln.Close()
	})
}

// TestLimitListenerClosesIdleKeepAlives: with the limit reached by a
// keep-alive connection that waits between requests, the next caller is
// served at once (the idle connection is closed to make room), not after
// the server's IdleTimeout.
func TestLimitListenerClosesIdleKeepAlives(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := newPipeListener()
		ln := httpguard.LimitListener(inner, 1)
		srv, err := httpguard.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			io.WriteString(w, "ok")
		}), httpguard.ServerConfig{})
		if err != nil {
			t.Fatal(err)
		}
		srv.ConnState = ln.ConnState
		go srv.Serve(ln)
		client := func() *http.Client {
			return &http.Client{Transport: &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) {
				return inner.dial(), nil
			}}}
		}
		get := func(c *http.Client) {
			t.Helper()
			resp, err := c.Get("http://127.0.0.1/")
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		keepAlive := client()
		get(keepAlive) // its connection stays open, idle
		synctest.Wait()
		start := time.Now()
		other := client()
		get(other)
		other.CloseIdleConnections()
		if waited := time.Since(start); waited >= httpguard.DefaultIdleTimeout/2 {
			t.Fatalf("the second caller waited %v behind an idle keep-alive connection", waited)
		}
		keepAlive.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
}
