package drpc

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"time"
)

// ErrorBody is the JSON answer of a request that got no result. Kind is
// "unknown_function" (404), "invalid" (400), "too_large" (413),
// "overloaded" (429), "busy" (503), "stopped" (503), "timeout" (504) or
// "failed" (500). Answers 429 and 503 "busy" carry a Retry-After header.
type ErrorBody struct {
	Error string `json:"error"`
	Kind  string `json:"kind"`
}

// Handler serves the functions over HTTP:
//
//	POST /drpc/{function}?timeout=2s     body: the arguments
//
// It answers a Result as JSON (200), or an ErrorBody: 422 "rejected" when an
// operation rejected the request's input (ErrRejected), 500 "failed" when its
// batch failed. The deadline is the
// timeout parameter (Go duration syntax), or the Config's Timeout, at
// most its MaxTimeout; it starts once the arguments are read. The
// request's context counts too: a caller that goes away ends the request
// (ErrTimeout) and cancels its batch's work.
//
// A request is refused before its body is read when its function is
// unknown (404) or has MaxConcurrent requests in flight (429), or when
// its Content-Length is over MaxArgs (413); a body that turns out longer
// is cut at MaxArgs (http.MaxBytesReader: 413, and the connection is
// closed).
//
// The handler authenticates nobody: wrap it with the middleware that does
// (and serve it with HTTPServer).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /drpc/{function}", s.serveRequest)
	return mux
}

func (s *Server) serveRequest(w http.ResponseWriter, r *http.Request) {
	function := r.PathValue("function")
	var timeout time.Duration
	if v := r.URL.Query().Get("timeout"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			s.writeError(w, fmt.Errorf("timeout=%.40q: want a positive duration such as 2s", v))
			return
		}
		timeout = d
	}
	if r.ContentLength > int64(s.cfg.MaxArgs) {
		s.writeError(w, s.refused(function, &s.counters.tooLarge,
			fmt.Errorf("%w: %s: arguments of %d bytes, at most %d", ErrTooLarge, function, r.ContentLength, s.cfg.MaxArgs)))
		return
	}
	f, err := s.admit(function)
	if err != nil {
		s.writeError(w, err)
		return
	}
	defer f.release()
	args, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(s.cfg.MaxArgs)))
	if err != nil {
		if errors.As(err, new(*http.MaxBytesError)) {
			err = s.refused(function, &s.counters.tooLarge,
				fmt.Errorf("%w: %s: arguments over %d bytes", ErrTooLarge, function, s.cfg.MaxArgs))
		} else {
			err = fmt.Errorf("reading the arguments: %w", err)
		}
		s.writeError(w, err)
		return
	}
	res, err := s.execute(r.Context(), f, string(args), timeout)
	if err != nil {
		s.writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(res)
}

// status returns the HTTP status and ErrorBody kind of an error.
func status(err error) (int, string) {
	switch {
	case errors.Is(err, ErrUnknownFunction):
		return http.StatusNotFound, "unknown_function"
	case errors.Is(err, ErrTooLarge):
		return http.StatusRequestEntityTooLarge, "too_large"
	case errors.Is(err, ErrOverloaded):
		return http.StatusTooManyRequests, "overloaded"
	case errors.Is(err, ErrBusy):
		return http.StatusServiceUnavailable, "busy"
	case errors.Is(err, ErrStopped):
		return http.StatusServiceUnavailable, "stopped"
	case errors.Is(err, ErrTimeout):
		return http.StatusGatewayTimeout, "timeout"
	case errors.Is(err, ErrRejected):
		return http.StatusUnprocessableEntity, "rejected"
	case errors.Is(err, ErrFailed):
		return http.StatusInternalServerError, "failed"
	}
	return http.StatusBadRequest, "invalid"
}

func (s *Server) writeError(w http.ResponseWriter, err error) {
	code, kind := status(err)
	if errors.Is(err, ErrOverloaded) || errors.Is(err, ErrBusy) {
		secs := max(1, int(math.Ceil(s.cfg.RetryAfter.Seconds())))
		w.Header().Set("Retry-After", strconv.Itoa(secs))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(ErrorBody{Error: err.Error(), Kind: kind})
}

// HTTPServer returns an http.Server for h with the Config's connection
// budgets (ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout,
// MaxHeaderBytes); net/http's own error lines go to the Config's Logger.
// h is Handler, or Handler wrapped by middleware (authentication, origin
// checks); nil means Handler. The caller serves it on its listener and
// shuts it down.
func (s *Server) HTTPServer(h http.Handler) *http.Server {
	if h == nil {
		h = s.Handler()
	}
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		ReadTimeout:       s.cfg.ReadTimeout,
		WriteTimeout:      s.cfg.WriteTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		MaxHeaderBytes:    s.cfg.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
}
