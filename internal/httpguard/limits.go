package httpguard

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// MaxBytes returns the middleware that bounds request bodies to n bytes
// (0: no body at all). A request that declares a longer body
// (Content-Length > n) is refused with 413 Content Too Large at once,
// before anything of it is read and before the handler runs; the
// connection is then closed rather than drained. Any other body is
// wrapped in http.MaxBytesReader: a read past n fails with
// *http.MaxBytesError (the handler answers, 413 is the right status)
// and the connection is closed after the answer; that cut is logged and
// counted as a refusal too. It panics if n is negative.
func (g *Guard) MaxBytes(n int64) Middleware {
	if n < 0 {
		panic("httpguard: MaxBytes of a negative size")
	}
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ContentLength > n {
				w.Header().Set("Connection", "close")
				g.refuse(w, r, ReasonBodyTooLarge, http.StatusRequestEntityTooLarge,
					fmt.Sprintf("the body of %d bytes is over this server's limit of %d", r.ContentLength, n))
				return
			}
			if r.Body != nil && r.Body != http.NoBody {
				r.Body = &cutBody{ReadCloser: http.MaxBytesReader(w, r.Body, n), g: g, r: r}
			}
			h.ServeHTTP(w, r)
		})
	}
}

// cutBody records the first read of a body past its limit.
type cutBody struct {
	io.ReadCloser
	g    *Guard
	r    *http.Request
	once sync.Once
}

func (b *cutBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	var tooLarge *http.MaxBytesError
	if err != nil && errors.As(err, &tooLarge) {
		b.once.Do(func() {
			b.g.record(b.r, ReasonBodyTooLarge, 0, fmt.Sprintf("the body was cut at this server's limit of %d bytes", tooLarge.Limit))
		})
	}
	return n, err
}

// Concurrency returns the middleware that lets at most n requests
// through at once, for the routes it wraps together: one Middleware
// value is one budget (wrap every upload route with the same value to
// share it). A request beyond it is refused at once with 503 Service
// Unavailable and "Retry-After: 1", rather than queued. It panics if n
// is not positive.
func (g *Guard) Concurrency(n int) Middleware {
	if n <= 0 {
		panic("httpguard: Concurrency of a non-positive budget")
	}
	sem := make(chan struct{}, n)
	msg := "too many requests in progress (at most " + strconv.Itoa(n) + "); retry later"
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
				h.ServeHTTP(w, r)
			default:
				w.Header().Set("Retry-After", "1")
				g.refuse(w, r, ReasonBusy, http.StatusServiceUnavailable, msg)
			}
		})
	}
}

// Deadlines returns the middleware that extends the read and write
// deadlines of the requests it wraps to read and write from their start
// (Extend; zero leaves one as the server set it), for the routes that
// legitimately outlast the server's ReadTimeout or WriteTimeout (an
// artifact upload or download). Bound such routes' numbers with
// Concurrency. A connection whose deadlines cannot be moved is logged at
// Warn; the request goes on with the server's.
func (g *Guard) Deadlines(read, write time.Duration) Middleware {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if err := Extend(w, read, write); err != nil {
				g.log.Warn("httpguard: extending the deadlines", "server", g.server, "path", r.URL.Path, "err", err)
			}
			h.ServeHTTP(w, r)
		})
	}
}
