package httpguard_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/squallstream/squall/internal/httpguard"
)

// spyBody fails the test if anything reads it.
type spyBody struct{ reads atomic.Int64 }

func (b *spyBody) Read(p []byte) (int, error) { b.reads.Add(1); return 0, io.EOF }
func (b *spyBody) Close() error               { return nil }

const hundredGB = 100 << 30

// A declared body over the limit is refused with 413 before the handler
// runs and before a byte of it is read.
func TestMaxBytesRefusesDeclaredLength(t *testing.T) {
	g, rec := newGuard()
	h := &ok{}
	body := &spyBody{}
	req := httptest.NewRequest("POST", "/code/upload", nil)
	req.Body, req.ContentLength = body, hundredGB
	rr := serveDirect(g.MaxBytes(1<<20)(h), req, "")
	if rr.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rr.Body.String(), "over this server's limit of 1048576") {
		t.Fatalf("declared 100 GB: %d %q", rr.Code, rr.Body)
	}
	if h.count() != 0 || body.reads.Load() != 0 {
		t.Fatalf("handler ran %d times, body read %d times", h.count(), body.reads.Load())
	}
	if rr.Header().Get("Connection") != "close" {
		t.Fatal("the connection is not closed after the refusal")
	}
	if g.Refusals().Counts()["body_too_large"] != 1 || len(rec.records()) != 1 {
		t.Fatalf("counts %v, logs %v", g.Refusals().Counts(), rec.records())
	}
}

// countConn counts the bytes the server reads from a connection.
type countConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

type countListener struct {
	net.Listener
	n atomic.Int64
}

func (l *countListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countConn{c, &l.n}, nil
}

// The same over a real loopback connection: the client declares 100 GB
// and sends 64 KiB of it; the answer is 413 with the connection closed,
// and the server read no more than its first buffer (headers included).
func TestMaxBytesOverTheWire(t *testing.T) {
	g, _ := newGuard()
	h := &ok{}
	ts := httptest.NewUnstartedServer(g.MaxBytes(1 << 20)(h))
	cl := &countListener{Listener: ts.Listener}
	ts.Listener = cl
	ts.Start()
	defer ts.Close()
	c, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	head := fmt.Sprintf("POST /code/upload HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n", ts.Listener.Addr(), int64(hundredGB))
	if _, err := io.WriteString(c, head+strings.Repeat("x", 64<<10)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !resp.Close {
		t.Fatalf("status %d, close %v", resp.StatusCode, resp.Close)
	}
	if h.count() != 0 {
		t.Fatal("the handler ran")
	}
	if n := cl.n.Load(); n > 4096 {
		t.Fatalf("the server read %d bytes of a refused request", n)
	}
}

// A body longer than it declared (or of unknown length) is cut at the
// limit; the handler sees *http.MaxBytesError; the cut is counted and
// logged once.
func TestMaxBytesCutsTheBody(t *testing.T) {
	g, rec := newGuard()
	type result struct {
		n   int
		err error
	}
	got := make(chan result, 1)
	ts := serveLocal(t, g.MaxBytes(1000)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		_, _ = io.ReadAll(r.Body) // a second read past the limit is not a second refusal
		got <- result{len(b), err}
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
		}
	})))
	// Chunked: no Content-Length to refuse up front.
	req, _ := http.NewRequest("POST", ts.URL+"/", io.MultiReader(strings.NewReader(strings.Repeat("x", 5000))))
	code, _, _ := do(t, ts, req)
	r := <-got
	var tooLarge *http.MaxBytesError
	if code != http.StatusRequestEntityTooLarge || r.n != 1000 || !errors.As(r.err, &tooLarge) {
		t.Fatalf("status %d, read %d, %v", code, r.n, r.err)
	}
	if n := g.Refusals().Counts()["body_too_large"]; n != 1 {
		t.Fatalf("body_too_large %d, want 1", n)
	}
	if recs := rec.records(); len(recs) != 1 || !strings.Contains(recs[0]["why"], "cut at this server's limit of 1000") {
		t.Fatalf("logs %v", recs)
	}
	// Within the limit, untouched.
	req, _ = http.NewRequest("POST", ts.URL+"/", strings.NewReader(strings.Repeat("x", 1000)))
	do(t, ts, req)
	if r := <-got; r.n != 1000 || r.err != nil {
		t.Fatalf("a body at the limit: %d %v", r.n, r.err)
	}
}

// Concurrency(n) lets n requests in; the n+1-th is refused at once with
// 503 and Retry-After; once one leaves, another gets in.
func TestConcurrency(t *testing.T) {
	const n = 3
	g, _ := newGuard()
	entered, release := make(chan struct{}), make(chan struct{})
	h := g.Concurrency(n)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/block" {
			entered <- struct{}{}
			<-release
		}
		_, _ = w.Write([]byte("ok"))
	}))
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if rr := serveDirect(h, httptest.NewRequest("POST", "/block", nil), ""); rr.Code != 200 {
				t.Errorf("within the budget: %d", rr.Code)
			}
		})
		<-entered
	}
	rr := serveDirect(h, httptest.NewRequest("POST", "/fast", nil), "")
	if rr.Code != http.StatusServiceUnavailable || rr.Header().Get("Retry-After") != "1" {
		t.Fatalf("request %d: %d, Retry-After %q", n+1, rr.Code, rr.Header().Get("Retry-After"))
	}
	close(release)
	wg.Wait()
	if rr := serveDirect(h, httptest.NewRequest("POST", "/fast", nil), ""); rr.Code != 200 {
		t.Fatalf("after the others left: %d", rr.Code)
	}
	if c := g.Refusals().Counts()["busy"]; c != 1 {
		t.Fatalf("busy %d", c)
	}
}

// Every reason is counted apart and exported as
// squall_http_refused_total{server,reason}.
func TestRefusalsCollector(t *testing.T) {
	g, _ := newGuard()
	h := g.Hosts()(&ok{})
	for range 2 {
		req := httptest.NewRequest("GET", "/", nil)
		req.Host = "evil.example"
		serveDirect(h, req, "127.0.0.1:80")
	}
	req := httptest.NewRequest("POST", "/", nil)
	req.ContentLength = 10
	serveDirect(g.MaxBytes(1)(&ok{}), req, "")
	reg := prometheus.NewRegistry()
	reg.MustRegister(g.Collector())
	other := httpguard.New(httpguard.Config{Server: "other"})
	reg.MustRegister(other.Collector()) // another server's guard shares the registry
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(mfs) != 1 || mfs[0].GetName() != "squall_http_refused_total" || mfs[0].GetType() != dto.MetricType_COUNTER {
		t.Fatalf("families %v", mfs)
	}
	got := map[string]float64{}
	for _, m := range mfs[0].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		got[labels["server"]+"/"+labels["reason"]] = m.GetCounter().GetValue()
	}
	want := map[string]float64{}
	for _, r := range httpguard.Reasons() {
		want["test/"+r.String()], want["other/"+r.String()] = 0, 0
	}
	want["test/host"], want["test/body_too_large"] = 2, 1
	if !maps.Equal(got, want) {
		t.Fatalf("exported %v, want %v", got, want)
	}
}
