package supervisor

import (
	"crypto/subtle"
	"encoding/json"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/squallstream/squall/monitor/logfile"
)

// WorkerLogFile is the name of a worker's log in its slot's directory:
// JSON lines (slog), rotated by the worker (logfile.DefaultMaxBytes,
// logfile.DefaultMaxFiles). WorkerOutputFile receives what the worker
// process writes to its standard output and error (a panic's trace, the
// error it exits with).
const (
	WorkerLogFile    = "worker.jsonl"
	WorkerOutputFile = "worker.log"
)

// LogLines is the answer of GET /logs/{port}.
type LogLines struct {
	Port    int      `json:"port"`
	File    string   `json:"file"`
	Lines   []string `json:"lines"` // oldest first
	More    bool     `json:"more"`  // the scan stopped before the start of the log
	Skipped int      `json:"skipped"`
}

// logHandler serves the logs of the supervisor's slots:
//
//	GET /logs/{port}?q=TEXT&tail=N&output=1&format=text
//
// the last N lines (default 100, at most 1000) of the slot's worker log
// that contain TEXT (ignoring case), as LogLines or, with format=text, as
// plain text; output=1 reads the worker's standard output and error
// instead. With a token, requests must carry it (Authorization: Bearer).
func (s *Supervisor) logHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /logs/{port}", func(w http.ResponseWriter, r *http.Request) {
		port, err := strconv.Atoi(r.PathValue("port"))
		if err != nil || !slices.Contains(s.cfg.Ports, port) {
			http.Error(w, "no such slot: "+r.PathValue("port"), http.StatusNotFound)
			return
		}
		q := r.URL.Query()
		tail, _ := strconv.Atoi(q.Get("tail"))
		name, files := WorkerLogFile, logfile.DefaultMaxFiles
		if q.Get("output") != "" {
			name, files = WorkerOutputFile, 1
		}
		res, err := logfile.Tail(filepath.Join(s.slotDir(port), name), files, logfile.Query{Contains: q.Get("q"), Tail: tail})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if q.Get("format") == "text" {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Write([]byte(strings.Join(res.Lines, "\n") + "\n"))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(LogLines{Port: port, File: name, Lines: res.Lines, More: res.More, Skipped: res.Skipped})
	})
	if s.cfg.Token == "" {
		return mux
	}
	want := []byte("Bearer " + s.cfg.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="squall"`)
			http.Error(w, "a bearer token is required (Authorization: Bearer <token>)", http.StatusUnauthorized)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// loopback reports whether addr (host:port) is on a loopback interface.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return host == "localhost" || (ip != nil && ip.IsLoopback())
}
