package monitor

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"runtime/debug"
	"time"
)

// The actions of POST /api/v1/topologies/{name}/{action}.
const (
	actActivate   = "activate"
	actDeactivate = "deactivate"
	actKill       = "kill"
)

// modulePath is squall's module, whose version /version reports.
const modulePath = "github.com/squallstream/squall"

// Health is GET /healthz: the process serves.
type Health struct {
	Status string `json:"status"` // "ok"
}

// Readiness is GET /readyz; the answer is 200 when Ready, else 503.
type Readiness struct {
	Ready      bool                `json:"ready"`
	Topologies []TopologyReadiness `json:"topologies"` // sorted by name
}

// TopologyReadiness is one topology's part of Readiness.
type TopologyReadiness struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	Ready  bool   `json:"ready"`
	Error  string `json:"error,omitempty"` // why it halted
}

// Version is GET /version.
type Version struct {
	Module    string `json:"module"`     // "github.com/squallstream/squall"
	Version   string `json:"version"`    // its version in this build; "(devel)" when built inside the module
	Program   string `json:"program"`    // the main package's path
	GoVersion string `json:"go_version"` // the toolchain that built it
	VCS       VCS    `json:"vcs"`        // of the main module, when built from a checkout
}

// VCS is the version-control stamp of a build.
type VCS struct {
	Revision string `json:"revision,omitempty"`
	Time     string `json:"time,omitempty"`
	Modified bool   `json:"modified"`
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, Health{Status: "ok"})
}

func (s *Server) readyz(w http.ResponseWriter, _ *http.Request) {
	rd := Readiness{Ready: true, Topologies: []TopologyReadiness{}}
	for _, e := range s.reg.all() {
		st := e.status()
		tr := TopologyReadiness{Name: e.t.Name(), Status: st, Ready: st == StatusRunning}
		if e.batches != nil {
			if err := e.batches.Err(); err != nil {
				tr.Error = err.Error()
			}
		}
		rd.Ready = rd.Ready && tr.Ready
		rd.Topologies = append(rd.Topologies, tr)
	}
	code := http.StatusOK
	if !rd.Ready {
		code = http.StatusServiceUnavailable
	}
	writeJSON(w, code, rd)
}

func (s *Server) version(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, buildVersion())
}

func buildVersion() Version {
	v := Version{Module: modulePath, GoVersion: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	v.Program, v.GoVersion = bi.Path, bi.GoVersion
	if bi.Main.Path == modulePath {
		v.Version = bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path == modulePath {
			v.Version = d.Version
			if d.Replace != nil {
				v.Version = d.Replace.Version
			}
		}
	}
	for _, st := range bi.Settings {
		switch st.Key {
		case "vcs.revision":
			v.VCS.Revision = st.Value
		case "vcs.time":
			v.VCS.Time = st.Value
		case "vcs.modified":
			v.VCS.Modified = st.Value == "true"
		}
	}
	return v
}

func (s *Server) listTopologies(w http.ResponseWriter, _ *http.Request) {
	l := TopologyList{Topologies: []TopologySummary{}}
	for _, e := range s.reg.all() {
		l.Topologies = append(l.Topologies, e.read().summary())
	}
	writeJSON(w, http.StatusOK, l)
}

// entry returns the topology the request names, or answers 404.
func (s *Server) entry(w http.ResponseWriter, r *http.Request) *entry {
	name := r.PathValue("name")
	e := s.reg.lookup(name)
	if e == nil {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no topology named %q", name))
	}
	return e
}

func (s *Server) getTopology(w http.ResponseWriter, r *http.Request) {
	if e := s.entry(w, r); e != nil {
		writeJSON(w, http.StatusOK, e.read().detail())
	}
}

func (s *Server) getComponent(w http.ResponseWriter, r *http.Request) {
	e := s.entry(w, r)
	if e == nil {
		return
	}
	comp := r.PathValue("component")
	rd := e.read()
	cs, ok := rd.stats.Components[comp]
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Sprintf("topology %q has no component %q", e.t.Name(), comp))
		return
	}
	writeJSON(w, http.StatusOK, ComponentDetail{
		Topology: e.t.Name(), ComponentView: rd.componentView(comp, cs), Tasks: taskViews(cs.Tasks, e.figs), Errors: errorViews(e.t.Errors(), comp),
	})
}

// action returns the handler of a POST action.
func (s *Server) action(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.ReadOnly {
			writeError(w, http.StatusForbidden, "this process is a worker of a cluster: "+name+" the topology through the nimbus (the cluster's commands)")
			return
		}
		e := s.entry(w, r)
		if e == nil {
			return
		}
		timeout := s.cfg.StopTimeout
		if q := r.URL.Query().Get("timeout"); q != "" {
			if name != actKill {
				writeError(w, http.StatusBadRequest, "timeout applies to kill only")
				return
			}
			d, err := time.ParseDuration(q)
			if err != nil || d <= 0 {
				writeError(w, http.StatusBadRequest, fmt.Sprintf("timeout %q: want a positive duration such as 30s", q))
				return
			}
			timeout = d
		}
		if name == actKill {
			extendWrite(w, timeout)
		}
		if name != actKill && e.status() == StatusStopped {
			writeError(w, http.StatusConflict, fmt.Sprintf("topology %q is stopped", e.t.Name()))
			return
		}
		a := Action{Name: name, Time: time.Now().UTC()}
		switch name {
		case actActivate:
			e.t.Activate()
		case actDeactivate:
			e.t.Deactivate()
		case actKill:
			// The kill outlives a client that hangs up: a half-drained
			// stop is worse than a late answer.
			ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), timeout)
			err := e.t.Stop(ctx)
			cancel()
			if err != nil {
				a.Error = err.Error()
			}
		}
		e.setLast(a)
		s.cfg.Logger.Info("monitor: action", "topology", e.t.Name(), "action", name, "remote", r.RemoteAddr, "err", a.Error)
		writeJSON(w, http.StatusOK, ActionResult{Topology: e.t.Name(), Action: a, Status: e.status()})
	})
}

// promLogger passes promhttp's errors to the server's logger.
type promLogger struct{ log *slog.Logger }

func (l promLogger) Println(v ...any) { l.log.Warn("monitor: metrics: " + fmt.Sprint(v...)) }
