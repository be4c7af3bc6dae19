package monitor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/squallstream/squall/internal/logfile"
)

// The log viewer: the last lines of the process's JSON log file (and of
// its rotated files), optionally only those containing a string, read by
// package logfile from the end of the files in bounded memory.

// LogsView is GET /api/v1/logs.
type LogsView struct {
	File  string    `json:"file"`  // the log file read (Config.LogFile)
	Query string    `json:"q"`     // the substring searched for, ignoring case; "" for every line
	Tail  int       `json:"tail"`  // the most lines asked for
	Lines []LogLine `json:"lines"` // the last matching lines, oldest first
	// ScannedBytes is how much of the files was read.
	ScannedBytes int64 `json:"scanned_bytes"`
	// Skipped counts lines longer than 16 KiB, left out.
	Skipped int `json:"skipped"`
	// More is true when the search stopped at its budget (64 MiB read)
	// before reaching the start of the oldest file.
	More bool `json:"more"`
}

// LogLine is one line of the log. A JSON object (as slog.JSONHandler
// writes) is split into its time, level and message and the other
// attributes; any other line is in Raw.
type LogLine struct {
	Time  string         `json:"time,omitempty"`
	Level string         `json:"level,omitempty"`
	Msg   string         `json:"msg,omitempty"`
	Attrs map[string]any `json:"attrs,omitempty"`
	Raw   string         `json:"raw,omitempty"`
}

// parseLogLine splits a JSON log line; it is pure.
func parseLogLine(line string) LogLine {
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil || m == nil {
		return LogLine{Raw: line}
	}
	var l LogLine
	take := func(key string) string {
		v, ok := m[key].(string)
		if ok {
			delete(m, key)
		}
		return v
	}
	l.Time, l.Level, l.Msg = take("time"), take("level"), take("msg")
	if len(m) > 0 {
		l.Attrs = m
	}
	return l
}

// AttrList returns the attributes as "key=value", sorted by key, for the
// UI.
func (l LogLine) AttrList() []string {
	keys := make([]string, 0, len(l.Attrs))
	for k := range l.Attrs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]string, 0, len(keys))
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // the page's template escapes
	for _, k := range keys {
		buf.Reset()
		v := ""
		if s, ok := l.Attrs[k].(string); ok && s != "" && !strings.ContainsAny(s, " \t\n\"=") {
			v = s
		} else if err := enc.Encode(l.Attrs[k]); err == nil {
			v = strings.TrimSuffix(buf.String(), "\n")
		} else {
			v = fmt.Sprint(l.Attrs[k])
		}
		out = append(out, k+"="+v)
	}
	return out
}

// errNoLogFile answers the log routes when Config.LogFile is empty.
const errNoLogFile = "no log file is configured (monitor.Config.LogFile)"

// logQuery reads ?q= and ?tail= (logfile.ParseQuery).
func logQuery(r *http.Request) (logfile.Query, error) { return logfile.ParseQuery(r.URL.Query()) }

// readLogs runs q over the configured log.
func (s *Server) readLogs(q logfile.Query) (LogsView, error) {
	res, err := logfile.Tail(s.cfg.LogFile, s.cfg.LogFiles, q)
	if err != nil {
		return LogsView{}, err
	}
	v := LogsView{File: s.cfg.LogFile, Query: q.Contains, Tail: q.Tail, Lines: make([]LogLine, 0, len(res.Lines)),
		ScannedBytes: res.Scanned, Skipped: res.Skipped, More: res.More}
	for _, l := range res.Lines {
		v.Lines = append(v.Lines, parseLogLine(l))
	}
	return v, nil
}

func (s *Server) getLogs(w http.ResponseWriter, r *http.Request) {
	if s.cfg.LogFile == "" {
		writeError(w, http.StatusNotFound, errNoLogFile)
		return
	}
	q, err := logQuery(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	v, err := s.readLogs(q)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// logsData is what the log viewer page shows.
type logsData struct {
	Title      string
	Configured bool
	Q          string
	Tail       int
	V          LogsView
	Err        string // a bad query, or why the log could not be read
}

// logsPage reads the log for the viewer page.
func (s *Server) logsPage(r *http.Request) logsData {
	d := logsData{Title: "logs · squall", Configured: s.cfg.LogFile != "", Q: r.URL.Query().Get("q"), Tail: logfile.DefaultTail}
	if !d.Configured {
		return d
	}
	q, err := logQuery(r)
	if err != nil {
		d.Err = err.Error()
		return d
	}
	d.Tail = q.Tail
	if d.V, err = s.readLogs(q); err != nil {
		d.Err = err.Error()
	}
	slices.Reverse(d.V.Lines) // newest first on the page
	return d
}
