package monitor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/squallstream/squall/internal/httpguard"
)

// The budgets of the monitor's routes.
const (
	// maxBody bounds request bodies: no route of the monitor reads one.
	maxBody = 64 << 10
	// maxHeavy bounds the profiles and log searches in progress at once.
	maxHeavy = 4
)

// routes builds the server's handler. Every route is a Go 1.22 ServeMux
// pattern with its method. Every request passes the Host allowlist, the
// cross-origin check of non-safe methods and the body limit; every route
// but the probes establishes the request's identity and checks it
// against the route's policy (reads: any identity; actions, profiles and
// logs: the admin role when credentials are configured).
func (s *Server) routes(ui *ui) (http.Handler, error) {
	g := s.guard
	crossOrigin, err := g.CrossOrigin(s.cfg.TrustedOrigins...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	authn := g.Authenticate(s.authenticator(), httpguard.AuthConfig{PlainLoopback: httpguard.LoopbackAddr(s.cfg.Addr)})
	readPolicy, adminPolicy := g.Require(httpguard.AnyIdentity), g.Require(httpguard.AnyIdentity)
	if s.cfg.Token != "" || s.cfg.Authenticator != nil {
		adminPolicy = g.Require(httpguard.Roles(httpguard.RoleAdmin))
	}
	heavy := g.Concurrency(maxHeavy)
	read := func(h http.Handler) http.Handler { return httpguard.Chain(h, authn, readPolicy) }
	admin := func(h http.Handler) http.Handler { return httpguard.Chain(h, authn, adminPolicy) }
	adminHeavy := func(h http.Handler) http.Handler { return httpguard.Chain(h, authn, adminPolicy, heavy) }

	mux := http.NewServeMux()

	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /readyz", s.readyz)
	mux.Handle("GET /version", read(http.HandlerFunc(s.version)))
	mux.Handle("GET /metrics", read(promhttp.HandlerFor(s.metrics, promhttp.HandlerOpts{
		ErrorLog: promLogger{s.cfg.Logger}, ErrorHandling: promhttp.ContinueOnError,
	})))

	mux.Handle("GET /debug/pprof/{$}", admin(http.HandlerFunc(pprofIndex)))
	mux.Handle("GET /debug/pprof/profile", adminHeavy(http.HandlerFunc(pprofCPU)))
	mux.Handle("GET /debug/pprof/trace", adminHeavy(http.HandlerFunc(pprofTrace)))
	mux.Handle("GET /debug/pprof/{profile}", adminHeavy(http.HandlerFunc(pprofNamed)))

	mux.Handle("GET /api/v1/logs", adminHeavy(http.HandlerFunc(s.getLogs)))
	mux.Handle("GET /api/v1/topologies", read(http.HandlerFunc(s.listTopologies)))
	mux.Handle("GET /api/v1/topologies/{name}", read(http.HandlerFunc(s.getTopology)))
	mux.Handle("GET /api/v1/topologies/{name}/components/{component}", read(http.HandlerFunc(s.getComponent)))
	for _, a := range []string{actActivate, actDeactivate, actKill} {
		mux.Handle("POST /api/v1/topologies/{name}/"+a, admin(s.action(a)))
	}

	mux.Handle("GET /{$}", read(http.HandlerFunc(ui.indexPage)))
	mux.Handle("GET /ui/topologies/{name}", read(http.HandlerFunc(ui.topology)))
	mux.Handle("GET /ui/partials/topologies", read(http.HandlerFunc(ui.indexPartial)))
	mux.Handle("GET /ui/partials/topologies/{name}", read(http.HandlerFunc(ui.topologyPartial)))
	mux.Handle("GET /ui/logs", adminHeavy(http.HandlerFunc(ui.logs)))
	mux.Handle("GET /ui/partials/logs", adminHeavy(http.HandlerFunc(ui.logsPartial)))
	mux.Handle("GET /static/", read(ui.static()))

	return jsonErrors(httpguard.Chain(mux, g.Hosts(s.hosts()...), crossOrigin, g.MaxBytes(maxBody))), nil
}

// authenticator is what establishes identities: the configured
// Authenticator and the Token (the admin identity), either optional.
func (s *Server) authenticator() httpguard.Authenticator {
	var token httpguard.Authenticator
	if s.cfg.Token != "" {
		token = httpguard.BearerToken(s.cfg.Token, httpguard.Identity{Role: httpguard.RoleAdmin, Name: "token"})
	}
	return httpguard.FirstOf(s.cfg.Authenticator, token)
}

// hosts are the names the Host header may carry besides the address a
// request arrives on: Config.Hosts and Addr's host (even 0.0.0.0, which
// URL then shows: an IP address cannot be rebound to another server).
func (s *Server) hosts() []string {
	names := slices.Clone(s.cfg.Hosts)
	if host, _, err := net.SplitHostPort(s.cfg.Addr); err == nil && host != "" {
		names = append(names, host)
	}
	return names
}

// ErrorBody is the JSON document of every error answer of /api, /healthz,
// /readyz, /version and /debug/pprof.
type ErrorBody struct {
	Error  string `json:"error"`
	Status int    `json:"status"` // the HTTP status code
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		writeError(w, http.StatusInternalServerError, "encoding the answer: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, ErrorBody{Error: msg, Status: code})
}

// jsonErrors turns the plain-text error answers of the mux and of
// net/http's handlers (404 and 405 with its Allow header) and of the
// guards (421, 403, 401, 413, 503) into ErrorBody documents, for every
// path but the UI's.
func jsonErrors(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !jsonPath(r.URL.Path) {
			h.ServeHTTP(w, r)
			return
		}
		jw := &errorWriter{ResponseWriter: w}
		h.ServeHTTP(jw, r)
		jw.finish()
	})
}

func jsonPath(p string) bool {
	for _, prefix := range []string{"/api/", "/debug/", "/healthz", "/readyz", "/version"} {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}

// errorWriter holds back a plain-text error answer to rewrite it as JSON.
type errorWriter struct {
	http.ResponseWriter
	code        int          // the held-back status; 0 when passing through
	body        bytes.Buffer // the held-back message
	wroteHeader bool
}

func (w *errorWriter) WriteHeader(code int) {
	if w.wroteHeader {
		return
	}
	w.wroteHeader = true
	if code >= 400 && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.code = code
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *errorWriter) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.code != 0 {
		return w.body.Write(p)
	}
	return w.ResponseWriter.Write(p)
}

// Flush lets streamed answers (profiles) through.
func (w *errorWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok && w.code == 0 {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *errorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *errorWriter) finish() {
	if w.code == 0 {
		return
	}
	h := w.Header()
	h.Del("Content-Length")
	h.Del("X-Content-Type-Options")
	writeJSON(w.ResponseWriter, w.code, ErrorBody{Error: strings.TrimSpace(w.body.String()), Status: w.code})
}
