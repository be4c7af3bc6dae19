package monitor

import (
	"fmt"
	"html/template"
	"net/http"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"time"

	"github.com/squallstream/squall/internal/httpguard"
)

// The profiles of /debug/pprof are served from runtime/pprof directly:
// importing net/http/pprof would register its handlers in
// http.DefaultServeMux of every program that uses this package. The
// paths and parameters are net/http/pprof's, so `go tool pprof` works
// against them:
//
//	go tool pprof http://127.0.0.1:PORT/debug/pprof/heap
//	go tool pprof http://127.0.0.1:PORT/debug/pprof/profile?seconds=10
//	curl -o trace.out http://127.0.0.1:PORT/debug/pprof/trace?seconds=2

// maxProfileSeconds bounds CPU profiles and traces.
const maxProfileSeconds = 600

// writeSlack is how long past its wait a CPU profile, a trace or a kill
// has to write its answer: such a request moves its connection's write
// deadline (the server's WriteTimeout) to its wait plus writeSlack.
const writeSlack = 30 * time.Second

// extendWrite gives the request of w d plus writeSlack to answer
// (httpguard.Extend); where the deadline cannot be moved (a server of
// one's own hiding its connection), the server's stays.
func extendWrite(w http.ResponseWriter, d time.Duration) {
	_ = httpguard.Extend(w, 0, d+writeSlack)
}

var pprofIndexPage = template.Must(template.New("pprof").Parse(`<!doctype html>
<html><head><title>squall profiles</title></head><body>
<h1>Profiles</h1>
<ul>
{{range .}}<li><a href="{{.Name}}?debug=1">{{.Name}}</a> ({{.Count}})</li>
{{end}}<li><a href="profile?seconds=10">profile</a> (CPU, 10 seconds)</li>
<li><a href="trace?seconds=1">trace</a> (execution trace, 1 second)</li>
</ul>
<p>Binary profiles for <code>go tool pprof</code>: drop <code>?debug=1</code>.</p>
</body></html>
`))

func pprofIndex(w http.ResponseWriter, _ *http.Request) {
	type row struct {
		Name  string
		Count int
	}
	var rows []row
	for _, p := range pprof.Profiles() {
		rows = append(rows, row{p.Name(), p.Count()})
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = pprofIndexPage.Execute(w, rows)
}

// seconds reads the "seconds" parameter: def if absent, an error answer
// (and ok false) if invalid.
func seconds(w http.ResponseWriter, r *http.Request, def int) (time.Duration, bool) {
	q := r.URL.Query().Get("seconds")
	if q == "" {
		return time.Duration(def) * time.Second, true
	}
	n, err := strconv.ParseFloat(q, 64)
	if err != nil || n <= 0 || n > maxProfileSeconds {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("seconds %q: want a number in (0, %d]", q, maxProfileSeconds))
		return 0, false
	}
	return time.Duration(n * float64(time.Second)), true
}

// sleep waits d or until the client goes away; it reports whether d
// passed.
func sleep(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

func binaryHeaders(w http.ResponseWriter, name string) {
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", name))
	w.Header().Set("X-Content-Type-Options", "nosniff")
}

func pprofCPU(w http.ResponseWriter, r *http.Request) {
	d, ok := seconds(w, r, 30)
	if !ok {
		return
	}
	extendWrite(w, d)
	binaryHeaders(w, "profile")
	if err := pprof.StartCPUProfile(w); err != nil {
		w.Header().Del("Content-Disposition")
		writeError(w, http.StatusInternalServerError, "starting the CPU profile: "+err.Error())
		return
	}
	sleep(r, d)
	pprof.StopCPUProfile()
}

func pprofTrace(w http.ResponseWriter, r *http.Request) {
	d, ok := seconds(w, r, 1)
	if !ok {
		return
	}
	extendWrite(w, d)
	binaryHeaders(w, "trace")
	if err := trace.Start(w); err != nil {
		w.Header().Del("Content-Disposition")
		writeError(w, http.StatusInternalServerError, "starting the trace: "+err.Error())
		return
	}
	sleep(r, d)
	trace.Stop()
}

func pprofNamed(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("profile")
	p := pprof.Lookup(name)
	if p == nil {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no profile named %q", name))
		return
	}
	debugLevel, _ := strconv.Atoi(r.URL.Query().Get("debug"))
	if name == "heap" && r.URL.Query().Get("gc") != "" {
		runtime.GC()
	}
	if debugLevel > 0 {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
	} else {
		binaryHeaders(w, name)
	}
	_ = p.WriteTo(w, debugLevel)
}
