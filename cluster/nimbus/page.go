package nimbus

import (
	"bytes"
	"html/template"
	"net/http"
	"time"
)

// servePage serves the cluster summary, GET /: the ClusterInfo as a page
// that reloads itself, with links to the workers' logs on their
// supervisors.
func (n *Nimbus) servePage(w http.ResponseWriter, r *http.Request) {
	c, err := n.Cluster(r.Context())
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	var buf bytes.Buffer
	if err := clusterPage.Execute(&buf, c); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(buf.Bytes())
}

var clusterPage = template.Must(template.New("cluster").Funcs(template.FuncMap{
	"ago": func(t time.Time) string { return time.Since(t).Round(time.Second).String() },
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="5">
<title>squall cluster</title>
<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse;margin-bottom:1.5em}
td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left}th{background:#f0f0f0}.err{color:#a00}</style>
</head><body>
<h1>squall cluster</h1>
<p>Leader: <b>{{if .Leader}}{{.Leader}}{{else}}none{{end}}</b>; this page from {{.Nimbus}};
nimbuses campaigning: {{range $i, $n := .Nimbuses}}{{if $i}}, {{end}}{{$n}}{{else}}none{{end}}.</p>
<h2>Topologies</h2>
<table><tr><th>name</th><th>status</th><th>workers</th><th>epoch</th><th>committed</th><th>generation</th><th>crashes</th></tr>
{{range .Topologies}}<tr><td>{{.Spec.Topology}}</td><td>{{.Spec.Status}}</td>
<td>{{if .Assignment}}{{if .Assignment.Unscheduled}}unscheduled: {{end}}{{end}}{{len .Workers}} running of {{.Spec.Workers}}</td>
<td>{{if .Assignment}}{{.Assignment.Epoch}}{{end}}</td>
<td>{{if .Status}}{{.Status.Committed}}{{else}}-{{end}}</td>
<td>{{if .Status}}{{.Status.Generation}}{{else}}-{{end}}</td>
<td>{{range .Crashes}}{{.Slot.Supervisor}}:{{.Slot.Port}} {{.Crashes}} ({{.Last}}) {{end}}</td></tr>
{{if .Assignment}}{{if .Assignment.Unscheduled}}<tr class="err"><td colspan="7">not scheduled: {{.Assignment.Unscheduled}}</td></tr>
{{end}}{{end}}{{range .Errors}}{{$slot := .Slot}}{{range .Errors}}<tr class="err"><td colspan="7">{{.Time.Format "15:04:05"}} {{$slot.Supervisor}}:{{$slot.Port}} {{.Component}} task {{.Task}}: {{.Error}}</td></tr>
{{end}}{{end}}{{else}}<tr><td colspan="7">none submitted</td></tr>{{end}}
</table>
<h2>Supervisors</h2>
<table><tr><th>supervisor</th><th>slot</th><th>topology</th><th>share</th><th>epoch</th><th>worker</th><th>logs</th></tr>
{{range $s := .Supervisors}}{{range .Slots}}<tr><td>{{$s.ID}}</td><td>{{.Port}}</td>
{{if .Topology}}<td>{{.Topology}}</td><td>{{.Share}}</td><td>{{.Epoch}}</td><td>{{if .PID}}pid {{.PID}} at {{.Addr}}{{else}}starting{{end}}</td>
{{else}}<td colspan="4">free</td>{{end}}
<td>{{if .Monitor}}<a href="{{.Monitor}}/">monitor</a> {{end}}{{if $s.LogURL}}<a href="{{$s.LogURL}}/logs/{{.Port}}?tail=200&amp;format=text">log</a>
<a href="{{$s.LogURL}}/logs/{{.Port}}?output=1&amp;format=text">output</a>{{end}}</td></tr>
{{end}}{{else}}<tr><td colspan="7">none alive</td></tr>{{end}}
</table>
</body></html>
`))
