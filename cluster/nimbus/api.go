package nimbus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/squallstream/squall/cluster/codestore"
	"github.com/squallstream/squall/cluster/etcdauth"
	"github.com/squallstream/squall/cluster/leader"
	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/internal/httpguard"
)

// The API of the command line, served by every nimbus under /api/. Every
// request that changes something is leader only: a standby answers 421
// Misdirected Request with the leader's ID, which is the leader's address
// (Client follows it). Every write is fenced (Leadership.Write).
//
//	POST   /api/topologies/{name}?workers=N&fingerprint=F   body: the artifact   submit (or upgrade);
//	                                                        header Squall-Demand: the demand (demand.go)
//	DELETE /api/topologies/{name}                                                kill
//	POST   /api/topologies/{name}/activate
//	POST   /api/topologies/{name}/deactivate
//	POST   /api/topologies/{name}/rebalance?workers=N
//	GET    /api/topologies                                                       list (any nimbus)
//	GET    /api/v1/cluster                                                       ClusterInfo (any nimbus)
//
// Beside the API: GET /metrics (Prometheus: squall_leader and the
// cluster's figures, see view.go) and GET /healthz.
//
// Errors are JSON: {"error": message, "kind": "not_leader"|"not_found"|
// "invalid"|"unavailable"|"internal", "leader": ID}.

// ErrNotFound: no topology of that name is submitted.
var ErrNotFound = errors.New("nimbus: no such topology")

// ErrInvalid is wrapped by errors of bad requests.
var ErrInvalid = errors.New("nimbus: invalid request")

// MaxWorkers bounds the worker processes of one topology.
const MaxWorkers = 1024

func checkWorkers(n int) error {
	switch {
	case n < 0:
		return fmt.Errorf("%w: workers must be positive, got %d", ErrInvalid, n)
	case n > MaxWorkers:
		return fmt.Errorf("%w: %d workers requested, at most %d", ErrInvalid, n, MaxWorkers)
	}
	return nil
}

// SubmitTopology is SubmitTopologyDemand for a topology that declares no
// load.
func (n *Nimbus) SubmitTopology(ctx context.Context, name string, workers int, fingerprint string, code io.Reader) (meta.Spec, error) {
	return n.SubmitTopologyDemand(ctx, name, workers, fingerprint, nil, code)
}

// SubmitTopologyDemand uploads a topology's artifact (waiting for its
// replication) and records its spec as active, keeping the status,
// rebalance count and owner of an earlier submission (an upgrade). The
// spec's Demand becomes demand (nil: the topology declares no load),
// replacing an earlier submission's; CheckDemand refuses a bad one
// before anything is uploaded. The owner of a new topology is the
// identity of ctx's request, if the nimbus has certificates
// (httpguard.IdentityFrom). Leader only.
func (n *Nimbus) SubmitTopologyDemand(ctx context.Context, name string, workers int, fingerprint string, demand *meta.Demand,
	code io.Reader) (meta.Spec, error) {
	if err := meta.CheckName("topology", name); err != nil {
		return meta.Spec{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := checkWorkers(workers); err != nil {
		return meta.Spec{}, err
	}
	if err := CheckDemand(demand); err != nil {
		return meta.Spec{}, err
	}
	dg, err := n.Submit(ctx, name, code)
	if err != nil {
		return meta.Spec{}, err
	}
	if err := n.grantCredential(ctx, name); err != nil {
		return meta.Spec{}, err
	}
	return n.updateSpec(ctx, name, true, func(s *meta.Spec) error {
		if s.Topology == "" {
			*s = meta.Spec{Topology: name, Status: meta.Active, Submitted: n.cfg.Clock.Now().UTC()}
			if id, ok := httpguard.IdentityFrom(ctx); ok && n.secure() {
				s.Owner = id.String()
			}
		}
		s.Artifact, s.Fingerprint, s.Workers, s.Demand = dg.String(), fingerprint, max(workers, 1), demand
		return nil
	})
}

// SetStatus activates or deactivates a topology. Leader only.
func (n *Nimbus) SetStatus(ctx context.Context, name string, status meta.TopologyStatus) (meta.Spec, error) {
	return n.updateSpec(ctx, name, false, func(s *meta.Spec) error { s.Status = status; return nil })
}

// Rebalance sets a topology's workers (0: unchanged) and has it scheduled
// afresh. Leader only.
func (n *Nimbus) Rebalance(ctx context.Context, name string, workers int) (meta.Spec, error) {
	if err := checkWorkers(workers); err != nil {
		return meta.Spec{}, err
	}
	return n.updateSpec(ctx, name, false, func(s *meta.Spec) error {
		if workers > 0 {
			s.Workers = workers
		}
		s.Rebalance++
		return nil
	})
}

// Kill removes a topology: its spec, its assignment (its supervisors stop
// its workers) and its code record. Leader only.
func (n *Nimbus) Kill(ctx context.Context, name string) error {
	l, err := n.cand.Leadership(ctx)
	if err != nil {
		return err
	}
	n.specMu.Lock()
	defer n.specMu.Unlock()
	resp, err := n.cfg.Client.Get(ctx, n.keys.Spec(name))
	if err != nil {
		return err
	}
	if len(resp.Kvs) == 0 {
		return fmt.Errorf("%w: %q", ErrNotFound, name)
	}
	_, err = l.Write(ctx, clientv3.OpDelete(n.keys.Spec(name)), clientv3.OpDelete(n.keys.Assignment(name)),
		clientv3.OpDelete(n.keys.CodeRecord(name)), clientv3.OpDelete(n.keys.Credentials(name)))
	if err == nil && n.cfg.WorkerCredentials {
		err = etcdauth.RevokeTopology(ctx, n.cfg.Client, name)
	}
	return err
}

// grantCredential gives a topology's workers their own etcd user, once
// (Config.WorkerCredentials).
func (n *Nimbus) grantCredential(ctx context.Context, name string) error {
	if !n.cfg.WorkerCredentials {
		return nil
	}
	l, err := n.cand.Leadership(ctx)
	if err != nil {
		return err
	}
	resp, err := n.cfg.Client.Get(ctx, n.keys.Credentials(name), clientv3.WithCountOnly())
	if err != nil || resp.Count > 0 {
		return err
	}
	c, err := etcdauth.GrantTopology(ctx, n.cfg.Client, n.cfg.Prefix, name)
	if err != nil {
		return fmt.Errorf("nimbus: the etcd user of topology %s: %w", name, err)
	}
	_, err = l.Write(ctx, clientv3.OpPut(n.keys.Credentials(name), meta.Encode(meta.WorkerCredential{User: c.User, Password: c.Password})))
	return err
}

// updateSpec changes a topology's spec under the leadership. Spec writes
// are serialized by specMu; the guard keeps any other nimbus out.
func (n *Nimbus) updateSpec(ctx context.Context, name string, create bool, change func(*meta.Spec) error) (meta.Spec, error) {
	l, err := n.cand.Leadership(ctx)
	if err != nil {
		return meta.Spec{}, err
	}
	n.specMu.Lock()
	defer n.specMu.Unlock()
	key := n.keys.Spec(name)
	resp, err := n.cfg.Client.Get(ctx, key)
	if err != nil {
		return meta.Spec{}, err
	}
	var s meta.Spec
	if len(resp.Kvs) == 0 {
		if !create {
			return s, fmt.Errorf("%w: %q", ErrNotFound, name)
		}
	} else if err := meta.Decode(key, resp.Kvs[0].Value, &s); err != nil {
		return s, err
	}
	if err := change(&s); err != nil {
		return s, err
	}
	_, err = l.Write(ctx, clientv3.OpPut(key, meta.Encode(s)))
	return s, err
}

// TopologyInfo is one topology as List reports it.
type TopologyInfo struct {
	Spec       meta.Spec         `json:"spec"`
	Assignment *meta.Assignment  `json:"assignment,omitempty"`
	Status     *meta.Status      `json:"status,omitempty"`
	Workers    []meta.WorkerInfo `json:"workers,omitempty"`
	Crashes    []meta.Crash      `json:"crashes,omitempty"`
	// Errors are the workers' last reported errors, by worker.
	Errors []meta.WorkerErrors `json:"errors,omitempty"`
}

// List reports every submitted topology. Any nimbus answers.
func (n *Nimbus) List(ctx context.Context) ([]TopologyInfo, error) {
	return List(ctx, n.cfg.Client, n.keys)
}

// List reads every submitted topology from etcd.
func List(ctx context.Context, cli *clientv3.Client, k meta.Layout) ([]TopologyInfo, error) {
	resp, err := cli.Get(ctx, k.Prefix+"/", clientv3.WithPrefix())
	if err != nil {
		return nil, err
	}
	byName := map[string]*TopologyInfo{}
	get := func(name string) *TopologyInfo {
		if byName[name] == nil {
			byName[name] = &TopologyInfo{}
		}
		return byName[name]
	}
	for _, kv := range resp.Kvs {
		key := string(kv.Key)
		var err error
		switch {
		case strings.HasPrefix(key, k.Specs()):
			err = meta.Decode(key, kv.Value, &get(strings.TrimPrefix(key, k.Specs())).Spec)
		case strings.HasPrefix(key, k.Assignments()):
			var a meta.Assignment
			if err = meta.Decode(key, kv.Value, &a); err == nil {
				get(a.Topology).Assignment = &a
			}
		case strings.HasPrefix(key, k.Statuses()):
			var s meta.Status
			if err = meta.Decode(key, kv.Value, &s); err == nil {
				get(s.Topology).Status = &s
			}
		case strings.HasPrefix(key, k.Workers()):
			var w meta.WorkerInfo
			if err = meta.Decode(key, kv.Value, &w); err == nil {
				t := get(w.Topology)
				t.Workers = append(t.Workers, w)
			}
		case strings.HasPrefix(key, k.ErrorReports()):
			var e meta.WorkerErrors
			if err = meta.Decode(key, kv.Value, &e); err == nil {
				t := get(e.Topology)
				t.Errors = append(t.Errors, e)
			}
		case strings.HasPrefix(key, k.Crashes()):
			var c meta.Crash
			if err = meta.Decode(key, kv.Value, &c); err == nil {
				t := get(c.Topology)
				t.Crashes = append(t.Crashes, c)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	var out []TopologyInfo
	for _, t := range byName {
		if t.Spec.Topology != "" { // leftovers of killed topologies are not listed
			out = append(out, *t)
		}
	}
	slices.SortFunc(out, func(a, b TopologyInfo) int { return strings.Compare(a.Spec.Topology, b.Spec.Topology) })
	return out, nil
}

// apiError is the JSON body of an error answer.
type apiError struct {
	Error  string `json:"error"`
	Kind   string `json:"kind"`
	Leader string `json:"leader,omitempty"`
}

func writeError(w http.ResponseWriter, err error) {
	e := apiError{Error: err.Error(), Kind: "internal"}
	code := http.StatusInternalServerError
	var nl *leader.NotLeaderError
	switch {
	case errors.As(err, &nl):
		e.Kind, e.Leader, code = "not_leader", nl.Leader, http.StatusMisdirectedRequest
	case errors.Is(err, ErrNotFound):
		e.Kind, code = "not_found", http.StatusNotFound
	case errors.Is(err, ErrDemandTooLarge):
		e.Kind, code = "invalid", http.StatusRequestEntityTooLarge
	case errors.Is(err, ErrInvalid):
		e.Kind, code = "invalid", http.StatusBadRequest
	case errors.Is(err, ErrForbidden):
		e.Kind, code = "forbidden", http.StatusForbidden
	case errors.Is(err, leader.ErrDeposed), errors.Is(err, codestore.ErrReplication), errors.Is(err, leader.ErrNotLeader):
		e.Kind, code = "unavailable", http.StatusServiceUnavailable
	}
	writeJSON(w, code, e)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func intParam(r *http.Request, name string) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%w: %s=%q is not a number", ErrInvalid, name, v)
	}
	return n, nil
}

func (n *Nimbus) apiHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/topologies/{name}", func(w http.ResponseWriter, r *http.Request) {
		workers, err := intParam(r, "workers")
		if err == nil {
			err = n.authorize(r.Context(), ActionSubmit, r.PathValue("name"))
		}
		var demand *meta.Demand
		if err == nil {
			demand, err = DecodeDemand(r.Header.Get(DemandHeader))
		}
		if err != nil {
			writeError(w, err)
			return
		}
		s, err := n.SubmitTopologyDemand(r.Context(), r.PathValue("name"), workers, r.URL.Query().Get("fingerprint"), demand, r.Body)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, s)
	})
	mux.HandleFunc("DELETE /api/topologies/{name}", func(w http.ResponseWriter, r *http.Request) {
		err := n.authorize(r.Context(), ActionKill, r.PathValue("name"))
		if err == nil {
			err = n.Kill(r.Context(), r.PathValue("name"))
		}
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, struct{}{})
	})
	mux.HandleFunc("POST /api/topologies/{name}/{action}", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		var s meta.Spec
		err := n.authorize(r.Context(), Action(r.PathValue("action")), name)
		if err == nil {
			err = n.act(r, name, &s)
		}
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, s)
	})
	mux.HandleFunc("GET /api/v1/cluster", func(w http.ResponseWriter, r *http.Request) {
		if err := n.allow(r.Context(), ActionRead, nil); err != nil {
			writeError(w, err)
			return
		}
		c, err := n.Cluster(r.Context())
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, c)
	})
	mux.HandleFunc("GET /api/topologies", func(w http.ResponseWriter, r *http.Request) {
		if err := n.allow(r.Context(), ActionRead, nil); err != nil {
			writeError(w, err)
			return
		}
		ts, err := n.List(r.Context())
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, ts)
	})
	return mux
}

// act runs a topology action of the API.
func (n *Nimbus) act(r *http.Request, name string, s *meta.Spec) (err error) {
	switch r.PathValue("action") {
	case "activate":
		*s, err = n.SetStatus(r.Context(), name, meta.Active)
	case "deactivate":
		*s, err = n.SetStatus(r.Context(), name, meta.Inactive)
	case "rebalance":
		var workers int
		if workers, err = intParam(r, "workers"); err == nil {
			*s, err = n.Rebalance(r.Context(), name, workers)
		}
	default:
		err = fmt.Errorf("%w: unknown action %q", ErrInvalid, r.PathValue("action"))
	}
	return err
}

// authorize applies the policy to an action on topology name, against
// its current spec.
func (n *Nimbus) authorize(ctx context.Context, action Action, name string) error {
	if !n.secure() {
		return nil
	}
	spec, err := n.readSpec(ctx, name)
	if err != nil {
		return err
	}
	return n.allow(ctx, action, spec)
}

// readSpec reads a topology's spec (nil when it is not submitted).
func (n *Nimbus) readSpec(ctx context.Context, name string) (*meta.Spec, error) {
	key := n.keys.Spec(name)
	resp, err := n.cfg.Client.Get(ctx, key)
	if err != nil || len(resp.Kvs) == 0 {
		return nil, err
	}
	var s meta.Spec
	if err := meta.Decode(key, resp.Kvs[0].Value, &s); err != nil {
		return nil, err
	}
	return &s, nil
}
