package supervisor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/squallstream/squall/cluster/pki"
	"github.com/squallstream/squall/internal/httpguard"
	"github.com/squallstream/squall/internal/logfile"
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
// instead. The slot's directory is the worker's: a log file there that is
// a symbolic link, not a regular file, or has other hard links is refused
// (403, logged), never followed.
//
// Behind httpguard's guards: the Host header must name this server (its
// listener's address, loopback names on loopback), no body is accepted,
// and with a Bundle or a Token a request needs the identity of an admin
// or a client of the cluster: a verified client certificate
// (pki.HTTPAuthenticator) or the token (Authorization: Bearer), which
// counts as an admin. With neither (a plain log server, on loopback
// only) anyone on the host may read. Refusals are logged.
func (s *Supervisor) logHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /logs/{port}", func(w http.ResponseWriter, r *http.Request) {
		port, err := strconv.Atoi(r.PathValue("port"))
		if err != nil || !slices.Contains(s.cfg.Ports, port) {
			http.Error(w, "no such slot: "+r.PathValue("port"), http.StatusNotFound)
			return
		}
		q := r.URL.Query()
		lq, err := logfile.ParseQuery(q)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		lq.Check = checkLogFile
		name, files := WorkerLogFile, logfile.DefaultMaxFiles
		if q.Get("output") != "" {
			name, files = WorkerOutputFile, 1
		}
		res, err := logfile.Tail(filepath.Join(s.slotDir(port), name), files, lq)
		if errors.Is(err, logfile.ErrNotRegular) || errors.Is(err, errHardLinked) {
			s.log.Warn("supervisor: refusing to serve a worker's log file: it may point outside the slot's directory",
				"port", port, "file", name, "err", err)
			http.Error(w, "refused: the worker's "+name+" is not a file of its own", http.StatusForbidden)
			return
		}
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
	g := httpguard.New(httpguard.Config{Server: "supervisor", Logger: s.log})
	var certs, token httpguard.Authenticator
	if s.cfg.Bundle != nil {
		certs = pki.HTTPAuthenticator()
	}
	if s.cfg.Token != "" {
		token = httpguard.BearerToken(s.cfg.Token, httpguard.Identity{Role: httpguard.RoleAdmin, Name: "token"})
	}
	plain := certs == nil && token == nil
	policy := httpguard.Policy(httpguard.AnyIdentity)
	if !plain {
		policy = httpguard.Roles(httpguard.RoleAdmin, httpguard.RoleClient)
	}
	var names []string
	if s.cfg.Listener != nil {
		if host, _, err := net.SplitHostPort(s.cfg.Listener.Addr().String()); err == nil {
			names = append(names, host)
		}
	}
	return httpguard.Chain(mux, g.Hosts(names...), g.MaxBytes(0),
		g.Authenticate(httpguard.FirstOf(certs, token), httpguard.AuthConfig{PlainLoopback: plain}), g.Require(policy))
}

// errHardLinked is a worker's log file with other hard links.
var errHardLinked = errors.New("supervisor: the file has other hard links")

// checkLogFile refuses a log file with other hard links: the worker owns
// the slot's directory and could link a file it cannot read there (where
// fs.protected_hardlinks allows it) for the log server to read. Its
// logs are written and rotated by renames, never linked.
func checkLogFile(st fs.FileInfo) error {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Nlink > 1 {
		return fmt.Errorf("%w: %s has %d", errHardLinked, st.Name(), sys.Nlink)
	}
	return nil
}

// loopback reports whether addr (host:port) is on a loopback interface.
func loopback(addr string) bool { return httpguard.LoopbackAddr(addr) }
