package monitor_test

import (
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/squallstream/squall/internal/logfile"
	"github.com/squallstream/squall/monitor"
)

// writeLogs writes n records with a JSON slog handler into a rotated log.
func writeLogs(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "worker.json")
	w, err := logfile.Open(logfile.Config{Path: path, MaxBytes: 2048, MaxFiles: 3})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewJSONHandler(w, nil))
	for i := range n {
		if i%7 == 0 {
			log.Warn("batch failed", "txid", i, "err", "cassandra: timeout <&>")
		} else {
			log.Info("batch committed", "txid", i)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLogsAPI(t *testing.T) {
	path := writeLogs(t, 100)
	ts := serve(t, monitor.NewRegistry(), monitor.Config{LogFile: path, LogFiles: 3})

	var v monitor.LogsView
	getJSON(t, ts, "GET", "/api/v1/logs?tail=3", nil, http.StatusOK, &v)
	if v.File != path || v.Tail != 3 || len(v.Lines) != 3 || v.More {
		t.Fatalf("tail: %+v", v)
	}
	if l := v.Lines[2]; l.Msg != "batch committed" || l.Level != "INFO" || l.Time == "" || l.Attrs["txid"] != 99.0 || l.Raw != "" {
		t.Fatalf("the newest line: %+v", l)
	}

	// Search, across the rotated files, oldest first.
	getJSON(t, ts, "GET", "/api/v1/logs?q=CASSANDRA&tail=1000", nil, http.StatusOK, &v)
	if len(v.Lines) < 3 || v.Query != "CASSANDRA" {
		t.Fatalf("search: %+v", v)
	}
	for i, l := range v.Lines {
		if l.Level != "WARN" || l.Attrs["err"] != "cassandra: timeout <&>" || i > 0 && l.Attrs["txid"].(float64) <= v.Lines[i-1].Attrs["txid"].(float64) {
			t.Fatalf("search line %d: %+v", i, l)
		}
	}
	if last := v.Lines[len(v.Lines)-1].Attrs["txid"]; last != 98.0 {
		t.Fatalf("newest match txid %v, want 98", last)
	}

	wantError(t, ts, "GET", "/api/v1/logs?tail=0", nil, http.StatusBadRequest, "tail")
	wantError(t, ts, "GET", "/api/v1/logs?tail=1001", nil, http.StatusBadRequest, "tail")
	wantError(t, ts, "POST", "/api/v1/logs", nil, http.StatusMethodNotAllowed, "")

	// The viewer page: newest first, escaped, refreshed by htmx.
	code, _, body := call(t, ts, "GET", "/ui/logs?q=timeout&tail=2", nil)
	page := string(body)
	if code != http.StatusOK || !strings.Contains(page, `hx-get="/ui/partials/logs?q=timeout&amp;tail=2"`) ||
		!strings.Contains(page, "err=&#34;cassandra: timeout &lt;&amp;&gt;&#34;") || strings.Contains(page, "<&>") ||
		strings.Index(page, "txid=98") > strings.Index(page, "txid=91") || !strings.Contains(page, `value="timeout"`) {
		t.Fatalf("logs page %d:\n%s", code, page)
	}
	code, _, body = call(t, ts, "GET", "/ui/partials/logs?tail=1", nil)
	if code != http.StatusOK || !strings.Contains(string(body), "txid=99") || strings.Contains(string(body), "<html") {
		t.Fatalf("logs partial %d:\n%s", code, body)
	}
}

func TestLogsNotConfigured(t *testing.T) {
	ts := serve(t, monitor.NewRegistry(), monitor.Config{})
	wantError(t, ts, "GET", "/api/v1/logs", nil, http.StatusNotFound, "no log file")
	code, _, body := call(t, ts, "GET", "/ui/logs", nil)
	if code != http.StatusOK || !strings.Contains(string(body), "No log file is configured") {
		t.Fatalf("logs page %d:\n%s", code, body)
	}
}

func TestLogsNeedTheToken(t *testing.T) {
	ts := serve(t, monitor.NewRegistry(), monitor.Config{LogFile: writeLogs(t, 3), Token: "s3cret"})
	wantError(t, ts, "GET", "/api/v1/logs", nil, http.StatusUnauthorized, "bearer token")
	if code, _, _ := call(t, ts, "GET", "/ui/logs", nil); code != http.StatusUnauthorized {
		t.Fatalf("logs page without the token: %d", code)
	}
	var v monitor.LogsView
	getJSON(t, ts, "GET", "/api/v1/logs", map[string]string{"Authorization": "Bearer s3cret"}, http.StatusOK, &v)
	if len(v.Lines) != 3 {
		t.Fatalf("with the token: %+v", v)
	}
}
