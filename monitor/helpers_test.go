package monitor_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/monitor"
	"github.com/squallstream/squall/ops"
	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident"
)

// testCtx bounds one test.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// wordCount submits a Trident word count over fixed batches (empty ones
// follow, so txids keep committing). While fail is true its split step
// fails every batch with a reported error; maxAttempts > 0 halts it then.
func wordCount(t *testing.T, ctx context.Context, name string, fail *atomic.Bool, maxAttempts int) *trident.Running {
	t.Helper()
	tt := trident.NewTopology(name)
	sentences := tt.NewStream("sentences", trident.FixedSource(trident.Fields{"sentence"},
		[][]any{{"the cow jumped over the moon"}, {"the man went to the store"}},
		[][]any{{"four score and seven years ago"}},
	))
	split := trident.FunctionFunc(func(_ context.Context, tu trident.Tuple, out trident.Collector) error {
		if fail != nil && fail.Load() {
			return failure.Reported(errors.New("split: injected failure"))
		}
		for _, w := range strings.Fields(tu.String("sentence")) {
			out.Emit(w)
		}
		return nil
	})
	trident.PersistentAggregate(
		sentences.Each(trident.Fields{"sentence"}, split, "word").GroupBy("word"),
		trident.OpaqueMemory[int64]("counts"), trident.Fields{"word"}, ops.Count{}, "count")
	cfg := trident.Config{
		BatchEmitInterval: 5 * time.Millisecond,
		RetryBackoff:      5 * time.Millisecond,
		MaxRetryBackoff:   20 * time.Millisecond,
		MaxAttempts:       maxAttempts,
	}
	r, err := tt.Submit(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop(t, r) })
	return r
}

// idleSpout emits nothing; it closes opened when its worker opens it.
type idleSpout struct{ opened chan struct{} }

func (s idleSpout) Open(context.Context, topology.TaskInfo, *topology.SpoutCollector) error {
	close(s.opened)
	return nil
}
func (idleSpout) NextTuple()   {}
func (idleSpout) Ack(any)      {}
func (idleSpout) Fail(any)     {}
func (idleSpout) Close() error { return nil }

// tupleLevel submits a tuple-level topology with one idle spout and
// returns once its worker runs.
func tupleLevel(t *testing.T, ctx context.Context, name string) *topology.Running {
	t.Helper()
	opened := make(chan struct{})
	b := topology.NewBuilder()
	b.Spout("idle", func() topology.Spout { return idleSpout{opened: opened} }).Output("x")
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	c := topology.NewLocalCluster()
	r, err := c.Submit(name, topo, topology.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop(t, c) })
	select {
	case <-opened:
	case <-ctx.Done():
		t.Fatal("the worker did not start")
	}
	return r
}

type stopper interface{ Stop(context.Context) error }

func stop(t *testing.T, s any) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	switch s := s.(type) {
	case stopper:
		_ = s.Stop(ctx)
	case *topology.LocalCluster:
		_ = s.Shutdown(ctx)
	}
}

// serve builds a server over reg and serves it with httptest.
func serve(t *testing.T, reg *monitor.Registry, cfg monitor.Config) *httptest.Server {
	t.Helper()
	s, err := monitor.NewServer(reg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts
}

// localRequest is httptest.NewRequest as a loopback client of a server
// on DefaultAddr sends it (Host 127.0.0.1, from 127.0.0.1), for tests
// that call the handler directly.
func localRequest(method, path string) *http.Request {
	req := httptest.NewRequest(method, path, nil)
	req.Host, req.RemoteAddr = "127.0.0.1", "127.0.0.1:40000"
	return req
}

// call makes a request and returns the status, headers and body.
func call(t *testing.T, ts *httptest.Server, method, path string, hdr map[string]string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, ts.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, body
}

// getJSON gets path, checks the status and decodes the JSON body into v.
func getJSON(t *testing.T, ts *httptest.Server, method, path string, hdr map[string]string, wantCode int, v any) {
	t.Helper()
	code, h, body := call(t, ts, method, path, hdr)
	if code != wantCode {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, code, wantCode, body)
	}
	if ct := h.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s %s: Content-Type %q: %s", method, path, ct, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("%s %s: %v: %s", method, path, err, body)
	}
}

// wantError checks an ErrorBody answer.
func wantError(t *testing.T, ts *httptest.Server, method, path string, hdr map[string]string, code int, contains string) http.Header {
	t.Helper()
	var eb monitor.ErrorBody
	c, h, body := call(t, ts, method, path, hdr)
	if c != code {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, c, code, body)
	}
	if ct := h.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s %s: Content-Type %q: %s", method, path, ct, body)
	}
	if err := json.Unmarshal(body, &eb); err != nil {
		t.Fatalf("%s %s: %v: %s", method, path, err, body)
	}
	if eb.Status != code || !strings.Contains(eb.Error, contains) {
		t.Fatalf("%s %s: error body %+v, want status %d and %q", method, path, eb, code, contains)
	}
	return h
}
