package httpguard

import (
	"encoding/json"
	"log/slog"
	"net/http"
)

// Middleware wraps a handler in a guard.
type Middleware func(http.Handler) http.Handler

// Chain wraps h in ms, the first one outermost: it sees the request
// first.
func Chain(h http.Handler, ms ...Middleware) http.Handler {
	for i := len(ms) - 1; i >= 0; i-- {
		h = ms[i](h)
	}
	return h
}

// ErrorWriter writes the answer of a refusal: its status code and a
// one-line message saying why.
type ErrorWriter func(w http.ResponseWriter, r *http.Request, code int, msg string)

// TextError writes msg as text/plain (http.Error).
func TextError(w http.ResponseWriter, _ *http.Request, code int, msg string) {
	http.Error(w, msg, code)
}

// ErrorBody is the document JSONError writes.
type ErrorBody struct {
	Error  string `json:"error"`
	Status int    `json:"status"` // the HTTP status code
}

// JSONError writes msg as an ErrorBody document (application/json).
func JSONError(w http.ResponseWriter, _ *http.Request, code int, msg string) {
	h := w.Header()
	h.Del("Content-Length")
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(ErrorBody{Error: msg, Status: code})
}

// Config configures a Guard. The zero Config is ready to use: every
// field left zero takes the default documented on it.
type Config struct {
	// Server names the server in refusal logs and in the server label of
	// squall_http_refused_total ("monitor", "nimbus", "supervisor").
	// Empty means "http".
	Server string

	// Logger receives a Warn record for every refusal. Nil means none.
	Logger *slog.Logger

	// WriteError writes the answer of every refusal. Nil means
	// TextError.
	WriteError ErrorWriter
}

// Guard builds the middleware of one server. Its refusals share the
// server's name, logger and Refusals counts. It is safe for concurrent
// use.
type Guard struct {
	server   string
	log      *slog.Logger
	write    ErrorWriter
	refusals Refusals
}

// New returns a Guard configured by cfg.
func New(cfg Config) *Guard {
	g := &Guard{server: cfg.Server, log: cfg.Logger, write: cfg.WriteError}
	if g.server == "" {
		g.server = "http"
	}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	if g.write == nil {
		g.write = TextError
	}
	return g
}

// Server returns the server's name (Config.Server).
func (g *Guard) Server() string { return g.server }

// Refusals returns the Guard's refusal counts.
func (g *Guard) Refusals() *Refusals { return &g.refusals }

// refuse answers r with code and msg, and records the refusal.
func (g *Guard) refuse(w http.ResponseWriter, r *http.Request, reason Reason, code int, msg string) {
	g.record(r, reason, code, msg)
	g.write(w, r, code, msg)
}

// record logs and counts a refusal for reason; code is the status
// answered (0 when the handler answers).
func (g *Guard) record(r *http.Request, reason Reason, code int, msg string) {
	g.refusals.add(reason)
	attrs := []slog.Attr{
		slog.String("server", g.server),
		slog.String("reason", reason.String()),
		slog.String("who", who(r)),
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.String("why", msg),
	}
	if code != 0 {
		attrs = append(attrs, slog.Int("status", code))
	}
	g.log.LogAttrs(r.Context(), slog.LevelWarn, "httpguard: request refused", attrs...)
}

// who names the client of r: its identity if Authenticate established
// one (and the address it came from), else its remote address.
func who(r *http.Request) string {
	if a, ok := r.Context().Value(authKey{}).(*authState); ok {
		return a.id.String() + "@" + r.RemoteAddr
	}
	return r.RemoteAddr
}
