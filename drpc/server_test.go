package drpc

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// serve plays a topology: every tick it takes the next request as batch
// txid (attempt 0) and answers it with its arguments upper-cased, unless
// they are "fail", whose batch it replays (attempt 1) instead.
func serve(ctx context.Context, f *Function) {
	for txid := uint64(1); ctx.Err() == nil; txid++ {
		if r := f.Next(txid, 0); r != nil {
			if r.Args == "fail" {
				if f.Next(txid, 1) != nil {
					panic("a replay carried the failed request")
				}
			} else {
				f.Answer(txid, [][]any{{strings.ToUpper(r.Args)}})
			}
			f.Committed(txid)
		}
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func TestExecute(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(Config{Timeout: time.Second})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		f := s.Function("up")
		f.FailureCause(func(uint64) error { return errors.New("the cause") })
		go serve(ctx, f)

		res, err := s.Execute(ctx, "up", "hi", 0)
		if err != nil || len(res.Rows) != 1 || res.Rows[0][0] != "HI" || res.ID == "" {
			t.Fatalf("up(hi) = %+v, %v", res, err)
		}
		if _, err := s.Execute(ctx, "up", "fail", 0); !errors.Is(err, ErrFailed) || !strings.Contains(err.Error(), "the cause") {
			t.Fatalf("up(fail) = %v, want ErrFailed with the cause", err)
		}
		if _, err := s.Execute(ctx, "down", "hi", 0); !errors.Is(err, ErrUnknownFunction) {
			t.Fatalf("down(hi) = %v, want ErrUnknownFunction", err)
		}
		if _, err := s.Execute(ctx, "up", strings.Repeat("x", DefaultMaxArgs+1), 0); err == nil {
			t.Fatal("arguments over MaxArgs were accepted")
		}
	})
}

// TestTimeoutAndBusy: with no batch taking requests, a request times out
// at its deadline and leaves the queue; a full queue refuses at once.
func TestTimeoutAndBusy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(Config{Timeout: time.Second, MaxTimeout: 5 * time.Second, MaxPending: 2})
		f := s.Function("idle")
		start := time.Now()
		_, err := s.Execute(context.Background(), "idle", "a", time.Hour)
		if !errors.Is(err, ErrTimeout) || time.Since(start) != 5*time.Second {
			t.Fatalf("Execute = %v after %v, want ErrTimeout after MaxTimeout (5s)", err, time.Since(start))
		}
		if f.Waiting() != 0 {
			t.Fatalf("%d requests still wait after their timeout", f.Waiting())
		}
		for range 2 {
			go s.Execute(context.Background(), "idle", "b", 0)
		}
		synctest.Wait()
		if _, err := s.Execute(context.Background(), "idle", "c", 0); !errors.Is(err, ErrBusy) {
			t.Fatalf("a third request = %v, want ErrBusy", err)
		}
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, httptest.NewRequest("POST", "/drpc/idle", strings.NewReader("c")))
		if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "1" || s.Stats().Busy != 2 {
			t.Fatalf("a third request over HTTP: %d Retry-After=%q, stats %+v; want 503, Retry-After 1, 2 busy", w.Code, w.Header().Get("Retry-After"), s.Stats())
		}
		f.Close()
		synctest.Wait()
		if _, err := s.Execute(context.Background(), "idle", "d", 0); !errors.Is(err, ErrStopped) {
			t.Fatalf("after Close = %v, want ErrStopped", err)
		}
	})
}

// TestReleaseFailsHeldRequestsOnly: a stopping worker fails the requests
// its batches hold; waiting ones stay for the next worker.
func TestReleaseFailsHeldRequestsOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(Config{})
		f := s.Function("f")
		errs := make(chan error, 2)
		for _, a := range []string{"held", "waiting"} {
			go func() { _, err := s.Execute(context.Background(), "f", a, time.Minute); errs <- err }()
			synctest.Wait()
		}
		if r := f.Next(1, 0); r == nil || r.Args != "held" {
			t.Fatalf("Next = %+v, want the oldest request", r)
		}
		f.Release()
		if err := <-errs; !errors.Is(err, ErrStopped) {
			t.Fatalf("the held request got %v, want ErrStopped", err)
		}
		if r := f.Next(1, 1); r == nil || r.Args != "waiting" {
			t.Fatalf("after Release, Next = %+v, want the waiting request", r)
		}
		f.Answer(1, nil)
		if err := <-errs; err != nil {
			t.Fatalf("the waiting request got %v", err)
		}
	})
}

func TestHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(Config{Timeout: time.Second, MaxArgs: 16})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go serve(ctx, s.Function("up"))
		s.Function("idle")
		h := s.Handler()
		post := func(path, body string) (int, string) {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("POST", path, strings.NewReader(body)))
			return w.Code, w.Body.String()
		}
		code, body := post("/drpc/up", "hi")
		var res Result
		if code != http.StatusOK || json.Unmarshal([]byte(body), &res) != nil || res.Rows[0][0] != "HI" {
			t.Fatalf("POST /drpc/up = %d %s", code, body)
		}
		for _, c := range []struct {
			path, body string
			code       int
			kind       string
		}{
			{"/drpc/up", "fail", http.StatusInternalServerError, "failed"},
			{"/drpc/nope", "x", http.StatusNotFound, "unknown_function"},
			{"/drpc/up?timeout=soon", "x", http.StatusBadRequest, "invalid"},
			{"/drpc/up", strings.Repeat("x", 17), http.StatusRequestEntityTooLarge, "too_large"},
			{"/drpc/idle?timeout=2s", "x", http.StatusGatewayTimeout, "timeout"},
		} {
			code, body := post(c.path, c.body)
			var e ErrorBody
			if code != c.code || json.Unmarshal([]byte(body), &e) != nil || e.Kind != c.kind {
				t.Errorf("POST %s: %d %s, want %d and kind %q", c.path, code, body, c.code, c.kind)
			}
		}
	})
}
