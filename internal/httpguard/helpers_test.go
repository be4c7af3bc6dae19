package httpguard_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/squallstream/squall/internal/httpguard"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// logRecorder is a slog.Handler keeping every record's attributes.
type logRecorder struct {
	mu   sync.Mutex
	recs []map[string]string
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logRecorder) WithGroup(string) slog.Handler            { return l }
func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	m := map[string]string{"msg": r.Message, "level": r.Level.String()}
	r.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value.String(); return true })
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs = append(l.recs, m)
	return nil
}

func (l *logRecorder) records() []map[string]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]map[string]string(nil), l.recs...)
}

// newGuard returns a guard named "test" logging into the returned
// recorder.
func newGuard() (*httpguard.Guard, *logRecorder) {
	rec := &logRecorder{}
	return httpguard.New(httpguard.Config{Server: "test", Logger: slog.New(rec)}), rec
}

// ok is a handler answering 200 "ok", which records that it ran.
type ok struct {
	mu  sync.Mutex
	ran int
}

func (h *ok) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.ran++
	h.mu.Unlock()
	_, _ = w.Write([]byte("ok"))
}

func (h *ok) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ran
}

// serveLocal serves h with httptest on loopback.
func serveLocal(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts
}

// do sends req with ts's client and returns the status and body.
func do(t *testing.T, ts *httptest.Server, req *http.Request) (int, http.Header, string) {
	t.Helper()
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

// serveDirect runs h on req with a recorder, as if req had arrived on a
// connection whose local address is local (empty: none in its context).
func serveDirect(h http.Handler, req *http.Request, local string) *httptest.ResponseRecorder {
	if local != "" {
		addr, err := net.ResolveTCPAddr("tcp", local)
		if err != nil {
			panic(err)
		}
		req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, addr))
	}
	rr := httptest.NewRecorder()
	h.ServeHTTP(rr, req)
	return rr
}

// pipeListener is an in-memory listener of net.Pipe connections, for
// servers run inside a synctest bubble (virtual time).
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

// dial returns the client end of a new connection.
func (l *pipeListener) dial() net.Conn {
	c, s := net.Pipe()
	l.conns <- s
	return c
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }
