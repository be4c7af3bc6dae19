package drpc

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// post sends body to h and returns the answer.
func post(h http.Handler, path string, body io.Reader) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("POST", path, body))
	return w
}

// TestOverloaded: beyond MaxConcurrent requests of a function in flight,
// a request is refused at once (ErrOverloaded; 429 with Retry-After over
// HTTP) and counted; once one ends, requests are admitted again. Another
// function is not limited by this one's requests.
func TestOverloaded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(Config{MaxConcurrent: 2, RetryAfter: 2500 * time.Millisecond})
		f := s.Function("slow")
		s.Function("other")
		errs := make(chan error, 2)
		for range 2 {
			go func() { _, err := s.Execute(context.Background(), "slow", "a", time.Minute); errs <- err }()
		}
		synctest.Wait()
		if f.InFlight() != 2 {
			t.Fatalf("%d requests in flight, want 2", f.InFlight())
		}
		start := time.Now()
		if _, err := s.Execute(context.Background(), "slow", "b", time.Minute); !errors.Is(err, ErrOverloaded) || time.Since(start) != 0 {
			t.Fatalf("a third request = %v after %v, want ErrOverloaded at once", err, time.Since(start))
		}
		w := post(s.Handler(), "/drpc/slow", strings.NewReader("c"))
		if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "3" || !strings.Contains(w.Body.String(), `"kind":"overloaded"`) {
			t.Fatalf("over HTTP: %d Retry-After=%q %s, want 429, Retry-After 3 and kind overloaded", w.Code, w.Header().Get("Retry-After"), w.Body)
		}
		if st := s.Stats(); st.Overloaded != 2 || st.Admitted != 2 {
			t.Fatalf("stats %+v, want 2 admitted and 2 overloaded", st)
		}
		go func() { _, err := s.Execute(context.Background(), "other", "x", time.Second); errs <- err }()
		if err := <-errs; !errors.Is(err, ErrTimeout) {
			t.Fatalf("a request to another function = %v, want it admitted (and timed out)", err)
		}
		r := f.Next(1, 0)
		f.Answer(1, [][]any{{r.Args}})
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if f.InFlight() != 1 {
			t.Fatalf("%d requests in flight after one answer, want 1", f.InFlight())
		}
		go func() { _, err := s.Execute(context.Background(), "slow", "d", time.Minute); errs <- err }()
		synctest.Wait()
		if f.InFlight() != 2 || s.Stats().Overloaded != 2 {
			t.Fatalf("after an answer: %d in flight, stats %+v; want the request admitted", f.InFlight(), s.Stats())
		}
		f.Close()
		for range 2 {
			if err := <-errs; !errors.Is(err, ErrStopped) {
				t.Fatalf("after Close: %v", err)
			}
		}
	})
}

// endless is a body of 64 MiB, counting what is read of it.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	if e.n >= 64<<20 {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), 64<<20-e.n)]
	for i := range p {
		p[i] = 'x'
	}
	e.n += int64(len(p))
	return len(p), nil
}

// TestTooLarge: arguments over MaxArgs are refused with 413 and counted:
// before the body is read when the Content-Length says so, and after at
// most MaxArgs (and a read buffer) of a body without one.
func TestTooLarge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(Config{MaxArgs: 1 << 10})
		s.Function("f")
		h := s.Handler()
		body := &endless{}
		req := httptest.NewRequest("POST", "/drpc/f", body)
		req.ContentLength = 1<<10 + 1
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusRequestEntityTooLarge || !strings.Contains(w.Body.String(), `"kind":"too_large"`) || body.n != 0 {
			t.Fatalf("Content-Length over MaxArgs: %d %s after reading %d bytes; want 413 before reading", w.Code, w.Body, body.n)
		}
		body = &endless{}
		if w := post(h, "/drpc/f", body); w.Code != http.StatusRequestEntityTooLarge || body.n > 1<<10+64<<10 {
			t.Fatalf("a body without a length: %d %s after reading %d bytes, want 413 after about MaxArgs (1 KiB)", w.Code, w.Body, body.n)
		}
		if _, err := s.Execute(context.Background(), "f", strings.Repeat("x", 1<<10+1), 0); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("Execute over MaxArgs: %v", err)
		}
		if st := s.Stats(); st.TooLarge != 3 || st.Admitted != 1 {
			t.Fatalf("stats %+v, want 3 too large, 1 admitted (the body without a length)", st)
		}
		if f := s.Function("f"); f.InFlight() != 0 || f.Waiting() != 0 {
			t.Fatalf("after refusals: %d in flight, %d waiting", f.InFlight(), f.Waiting())
		}
	})
}

// TestDeadlineCancelsTheRequestsWork: a request taken by a batch whose
// deadline passes gets ErrTimeout, and the context of its batch's work is
// done with that cause; a request whose caller goes away likewise. An
// answered request's context stays live until its batch is forgotten.
func TestDeadlineCancelsTheRequestsWork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(Config{})
		f := s.Function("f")
		errs := make(chan error, 1)
		go func() { _, err := s.Execute(context.Background(), "f", "slow", 2*time.Second); errs <- err }()
		synctest.Wait()
		f.Next(1, 0)
		ctx := s.Context("f", 1)
		if ctx == nil || ctx.Err() != nil {
			t.Fatalf("the batch's context: %v", ctx)
		}
		if s.Context("f", 2) != nil || s.Context("g", 1) != nil {
			t.Fatal("a context for a batch without a request")
		}
		time.Sleep(2 * time.Second)
		if err := <-errs; !errors.Is(err, ErrTimeout) {
			t.Fatalf("Execute = %v, want ErrTimeout", err)
		}
		if !errors.Is(context.Cause(ctx), ErrTimeout) {
			t.Fatalf("after the deadline the batch's context is %v (cause %v), want done with ErrTimeout", ctx.Err(), context.Cause(ctx))
		}

		// The caller goes away (over HTTP: the request's context).
		reqCtx, cancel := context.WithCancel(context.Background())
		done := make(chan *httptest.ResponseRecorder, 1)
		go func() {
			w := httptest.NewRecorder()
			s.Handler().ServeHTTP(w, httptest.NewRequestWithContext(reqCtx, "POST", "/drpc/f", strings.NewReader("gone")))
			done <- w
		}()
		synctest.Wait()
		f.Next(2, 0)
		ctx = s.Context("f", 2)
		cancel()
		if w := <-done; w.Code != http.StatusGatewayTimeout {
			t.Fatalf("a caller gone: %d %s", w.Code, w.Body)
		}
		if !errors.Is(context.Cause(ctx), context.Canceled) {
			t.Fatalf("after the caller went away the batch's context is %v", context.Cause(ctx))
		}

		// Answered: the work goes on until the batch is forgotten.
		go func() { _, err := s.Execute(context.Background(), "f", "quick", 0); errs <- err }()
		synctest.Wait()
		f.Next(3, 0)
		ctx = s.Context("f", 3)
		f.Answer(3, nil)
		if err := <-errs; err != nil || ctx.Err() != nil {
			t.Fatalf("answered: %v, context %v; want no error and a live context", err, ctx.Err())
		}
		f.Committed(3)
		if !errors.Is(context.Cause(ctx), errBatchEnded) {
			t.Fatalf("after its batch committed the context is %v", context.Cause(ctx))
		}
		if st := s.Stats(); st.Answered != 1 || st.TimedOut != 2 {
			t.Fatalf("stats %+v, want 1 answered, 2 timed out", st)
		}
	})
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []Config{
		{MaxArgs: -1},
		{MaxConcurrent: -1},
		{Timeout: time.Hour},
		{WriteTimeout: time.Minute},
		{MaxTimeout: 10 * time.Minute, WriteTimeout: 5 * time.Minute},
	} {
		if err := c.Validate(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%+v: Validate = %v, want ErrInvalidConfig", c, err)
		}
	}
	if err := (Config{MaxTimeout: 10 * time.Minute, WriteTimeout: 11 * time.Minute}).Validate(); err != nil {
		t.Errorf("a WriteTimeout past MaxTimeout: %v", err)
	}
	hs := NewServer(Config{}).HTTPServer(nil)
	if hs.ReadHeaderTimeout != DefaultReadHeaderTimeout || hs.ReadTimeout != DefaultReadTimeout || hs.IdleTimeout != DefaultIdleTimeout ||
		hs.WriteTimeout != DefaultReadTimeout+DefaultMaxTimeout+5*time.Second || hs.MaxHeaderBytes != DefaultMaxHeaderBytes || hs.Handler == nil {
		t.Fatalf("HTTPServer of the zero Config: %+v", hs)
	}
}

// TestLargeArgumentsOverLoopback: over a real connection, a 1 MiB
// argument is answered and a larger one refused with 413, each within a
// second (wall time, on loopback).
func TestLargeArgumentsOverLoopback(t *testing.T) {
	s := NewServer(Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := s.Function("len")
	go answerLengths(ctx, f)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := s.HTTPServer(nil)
	go hs.Serve(ln)
	defer func() {
		// Shutdown waits for the connections, the ones a 413 closes
		// (after net/http's lingering) included.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := hs.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	}()
	url := "http://" + ln.Addr().String() + "/drpc/len"
	for _, c := range []struct {
		size    int
		chunked bool // no Content-Length
		code    int
	}{
		{1 << 20, false, http.StatusOK},
		{1 << 20, true, http.StatusOK},
		{DefaultMaxArgs + 1, false, http.StatusRequestEntityTooLarge},
		{8 << 20, false, http.StatusRequestEntityTooLarge},
		{8 << 20, true, http.StatusRequestEntityTooLarge},
	} {
		var body io.Reader = strings.NewReader(strings.Repeat("x", c.size))
		if c.chunked {
			body = io.MultiReader(body)
		}
		start := time.Now()
		resp, err := http.Post(url, "text/plain", body)
		if err != nil {
			t.Fatal(err)
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		took := time.Since(start)
		t.Logf("%d bytes (chunked %v): %d after %v", c.size, c.chunked, resp.StatusCode, took)
		if resp.StatusCode != c.code || took > time.Second {
			t.Fatalf("%d bytes (chunked %v): %d %.200s after %v, want %d within 1s", c.size, c.chunked, resp.StatusCode, answer, took, c.code)
		}
	}
}

// answerLengths plays a topology answering each request with the length
// of its arguments, as soon as it waits.
func answerLengths(ctx context.Context, f *Function) {
	for txid := uint64(1); ctx.Err() == nil; {
		if r := f.Next(txid, 0); r != nil {
			f.Answer(txid, [][]any{{len(r.Args)}})
			f.Committed(txid)
			txid++
			continue
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Millisecond):
		}
	}
}
