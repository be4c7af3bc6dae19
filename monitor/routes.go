package monitor

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// routes builds the server's handler. Every route is a Go 1.22 ServeMux
// pattern with its method.
func (s *Server) routes(ui *ui) http.Handler {
	mux := http.NewServeMux()

	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /readyz", s.readyz)
	mux.HandleFunc("GET /version", s.version)
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.metrics, promhttp.HandlerOpts{
		ErrorLog: promLogger{s.cfg.Logger}, ErrorHandling: promhttp.ContinueOnError,
	}))

	mux.Handle("GET /debug/pprof/{$}", s.guard(http.HandlerFunc(pprofIndex)))
	mux.Handle("GET /debug/pprof/profile", s.guard(http.HandlerFunc(pprofCPU)))
	mux.Handle("GET /debug/pprof/trace", s.guard(http.HandlerFunc(pprofTrace)))
	mux.Handle("GET /debug/pprof/{profile}", s.guard(http.HandlerFunc(pprofNamed)))

	mux.Handle("GET /api/v1/logs", s.guard(http.HandlerFunc(s.getLogs)))
	mux.HandleFunc("GET /api/v1/topologies", s.listTopologies)
	mux.HandleFunc("GET /api/v1/topologies/{name}", s.getTopology)
	mux.HandleFunc("GET /api/v1/topologies/{name}/components/{component}", s.getComponent)
	actions := http.NewCrossOriginProtection()
	for _, a := range []string{actActivate, actDeactivate, actKill} {
		mux.Handle("POST /api/v1/topologies/{name}/"+a, actions.Handler(s.guard(s.action(a))))
	}

	mux.HandleFunc("GET /{$}", ui.indexPage)
	mux.HandleFunc("GET /ui/topologies/{name}", ui.topology)
	mux.HandleFunc("GET /ui/partials/topologies", ui.indexPartial)
	mux.HandleFunc("GET /ui/partials/topologies/{name}", ui.topologyPartial)
	mux.Handle("GET /ui/logs", s.guard(http.HandlerFunc(ui.logs)))
	mux.Handle("GET /ui/partials/logs", s.guard(http.HandlerFunc(ui.logsPartial)))
	mux.Handle("GET /static/", ui.static())

	return jsonErrors(mux)
}

// guard requires the bearer token, if one is configured (for actions,
// profiles and logs).
func (s *Server) guard(h http.Handler) http.Handler {
	if s.cfg.Token == "" {
		return h
	}
	want := []byte("Bearer " + s.cfg.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="squall"`)
			writeError(w, http.StatusUnauthorized, "a bearer token is required (Authorization: Bearer <token>)")
			return
		}
		h.ServeHTTP(w, r)
	})
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
// net/http's handlers (404 and 405 with its Allow header, 403 of the
// cross-origin check) into ErrorBody documents, for every path but the
// UI's.
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
