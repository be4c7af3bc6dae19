package topology

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"

	"github.com/squallstream/squall/transport"
)

// WorkerID identifies one worker (process) of a topology in cluster mode.
type WorkerID string

// WorkerSpec is one worker's share of a topology in cluster mode: which
// worker runs each task, how to reach the other workers, and where this
// one listens. Every worker of a topology gets the same Tasks and Peers.
type WorkerSpec struct {
	// Self is this worker's id.
	Self WorkerID

	// Tasks assigns every task of the topology, acker tasks included
	// (see Topology.TaskComponents), to a worker. The tasks of one
	// executor (a component with more tasks than executors) must go to
	// the same worker.
	Tasks map[TaskID]WorkerID

	// Peers maps every other worker in Tasks to the address of its
	// transport server (host:port).
	Peers map[WorkerID]string

	// Listener is where this worker receives from its peers. Nil means
	// listening on Server.Addr (default 127.0.0.1:0). The worker closes
	// it when it stops.
	Listener net.Listener

	// Client and Server are templates for the transport's configs: the
	// runtime sets their Topology, Worker, Peer, Addr, Listener, Handler
	// and Types, and fills Logger and Clock from Config when nil (a nil
	// Config.Logger leaves the transport's default, slog.Default(), so
	// refused peers are never logged to a discarding logger). Their TLS
	// and VerifyPeer are passed through as they are: set them to run the
	// workers' connections over mutual TLS. A Client.Dial that ignores its
	// address and looks the peer up (by the Peer of its config) lets a
	// peer move to a new address.
	Client transport.ClientConfig
	Server transport.ServerConfig
}

// assignment is a worker's view of a WorkerSpec, by executor.
type assignment struct {
	self     WorkerID
	peers    []WorkerID // the other workers this one sends to, sorted
	addrs    []string   // by peer index
	execPeer []int      // by executor: -1 if local, else the peer index
}

// TaskComponents returns the component id of every task of t when it runs
// with ackers acker tasks, indexed by task id; acker tasks report
// "__acker". Task ids are the same in every process that builds the same
// declaration: components are numbered in the order of their ids, then
// the acker tasks follow.
func (t *Topology) TaskComponents(ackers int) []string {
	out := make([]string, 0, t.numTasks+max(ackers, 0))
	for _, c := range t.components {
		for range c.taskIDs {
			out = append(out, c.id)
		}
	}
	for range max(ackers, 0) {
		out = append(out, ackerComponent)
	}
	return out
}

// ExecutorTasks returns the tasks of each executor of the named component,
// in executor order (contiguous runs of its task ids, as even as
// possible), or nil for no such component: the units a scheduler assigns
// to workers. Each acker task is an executor of its own.
func (t *Topology) ExecutorTasks(component string) [][]TaskID {
	c := t.component(component)
	if c == nil {
		return nil
	}
	var out [][]TaskID
	for _, run := range c.executorTasks() {
		out = append(out, slices.Clone(run))
	}
	return out
}

// ErrInvalidAssignment is wrapped by the errors RunWorker returns for a
// WorkerSpec that does not fit the topology.
var ErrInvalidAssignment = errors.New("topology: invalid worker assignment")

// assign records which executors run in this worker and which peer runs
// each of the others.
func (p *plan) assign(spec WorkerSpec) error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidAssignment}, args...)...))
	}
	if spec.Self == "" {
		bad("Self is empty")
	}
	a := &assignment{self: spec.Self, execPeer: make([]int, len(p.execs))}
	index := map[WorkerID]int{}
	for i, e := range p.execs {
		owner, ok := spec.Tasks[e.tasks[0]]
		if !ok {
			bad("task %d (%s) is not assigned", e.tasks[0], e.name())
			continue
		}
		for _, task := range e.tasks[1:] {
			if w := spec.Tasks[task]; w != owner {
				bad("tasks %d and %d of %s share an executor but are assigned to %q and %q", e.tasks[0], task, e.name(), owner, w)
			}
		}
		if owner == spec.Self {
			a.execPeer[i] = -1
			continue
		}
		if _, ok := index[owner]; !ok {
			addr := spec.Peers[owner]
			if addr == "" {
				bad("worker %q runs %s but has no address in Peers", owner, e.name())
			}
			index[owner] = len(a.peers)
			a.peers = append(a.peers, owner)
			a.addrs = append(a.addrs, addr)
		}
		a.execPeer[i] = index[owner]
	}
	for task := range spec.Tasks {
		if task < 0 || int(task) >= len(p.taskExec) {
			bad("task %d does not exist (the topology has %d tasks with its ackers)", task, len(p.taskExec))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	p.cluster = a
	return nil
}

// localTargets returns the targets that run in this worker, or all of
// them if none does (LocalOrShuffle).
func (p *plan) localTargets(targets []TaskID) []TaskID {
	if p.cluster == nil {
		return targets
	}
	local := slices.DeleteFunc(slices.Clone(targets), func(t TaskID) bool { return !p.local(p.taskExec[t]) })
	if len(local) == 0 {
		return targets
	}
	return local
}

// RunWorker runs this worker's share of t in cluster mode, as spec
// assigns it: the executors of the tasks assigned to spec.Self, a
// transport server that delivers what peers send to them, and one
// transport client per peer for what they send to tasks elsewhere. name
// identifies the topology on the wire; every worker must use the same
// name, declaration and Config (task ids and acker choice depend on them).
//
// The Running supervises the local executors as Submit's does (a crash
// restarts them all, with backoff); Stop stops this worker only. Trees
// that lose a message, or whose worker dies, time out and their spouts
// replay them: a spout whose acker runs elsewhere also times its trees out
// itself, between two and three MessageTimeouts after emit or the last
// ResetTimeout, in case the acker's worker is gone.
func RunWorker(name string, t *Topology, cfg Config, spec WorkerSpec) (*Running, error) {
	if name == "" {
		return nil, errors.New("topology: run worker: empty topology name")
	}
	if t == nil {
		return nil, errors.New("topology: run worker: nil topology")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	logger := cfg.Logger
	cfg = cfg.withDefaults()
	p := newPlan(t, cfg)
	if err := p.assign(spec); err != nil {
		return nil, err
	}
	r := newRunning(name, p, cfg)
	n, err := startNetwork(context.Background(), r, spec, logger)
	if err != nil {
		return nil, err
	}
	r.net = n
	go r.supervise()
	return r, nil
}

// Addr returns the address of a cluster-mode worker's transport server,
// or nil for a topology submitted to a LocalCluster.
func (r *Running) Addr() net.Addr {
	if r.net == nil {
		return nil
	}
	return r.net.server.Addr()
}

// PeerStats returns the transport counters of a cluster-mode worker's
// connection to each peer: messages sent, lost with a broken connection,
// reconnects.
func (r *Running) PeerStats() map[WorkerID]transport.ClientStats {
	if r.net == nil {
		return nil
	}
	out := make(map[WorkerID]transport.ClientStats, len(r.net.peers))
	for _, pe := range r.net.peers {
		out[pe.id] = pe.client.Stats()
	}
	return out
}

// TransportStats returns the counters of a cluster-mode worker's transport
// server: connections, frames, and the connections it refused or closed,
// by reason (transport.ServerStats.RefusedByReason, which a metrics layer
// exports as squall_transport_refused_total{reason}); false for a
// topology submitted to a LocalCluster.
func (r *Running) TransportStats() (transport.ServerStats, bool) {
	if r.net == nil {
		return transport.ServerStats{}, false
	}
	return r.net.server.Stats(), true
}

// PeerDrops returns the number of messages from peers that a cluster-mode
// worker dropped: they arrived while its executors were restarting or
// stopping, or did not fit the topology (logged). Their trees time out.
func (r *Running) PeerDrops() uint64 {
	if r.net == nil {
		return 0
	}
	return r.net.dropped.Load()
}
