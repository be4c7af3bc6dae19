// Package meta is the layout of the cluster's state in etcd: the keys the
// daemons share and the JSON records stored under them. It holds no logic
// beyond naming and encoding, so that nimbus, supervisor, worker and the
// command line agree on one layout.
//
// Keys under Layout.Prefix (default "/squall"):
//
//	nimbus/leader/<lease>                      election (package leader)
//	topologies/<topology>                      code record (package codestore)
//	code/<topology>/<sha256>/<nimbus>          code holders (package codestore)
//	specs/<topology>                           Spec: what the user asked for      leader only, fenced
//	assignments/<topology>                     Assignment: where it runs           leader only, fenced
//	supervisors/<supervisor>                   SupervisorInfo                      under the supervisor's lease
//	workers/<topology>/<supervisor>/<port>     WorkerInfo                          under the worker's lease
//	status/<topology>                          Status: committed txid              under the master's worker's lease
//	generations/<topology>                     Generation: owner generation        by the master's worker
//	crashes/<topology>/<supervisor>/<port>     Crash: restart counts of a slot     under the supervisor's lease
//	errors/<topology>/<supervisor>/<port>      WorkerErrors: its last errors       under the worker's lease
//	credentials/<topology>                     WorkerCredential: workers' etcd user  leader only, fenced
package meta

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/squallstream/squall/cluster/pki"
)

// DefaultPrefix is the prefix of every key of a cluster.
const DefaultPrefix = "/squall"

// Layout names the keys of one cluster.
type Layout struct {
	Prefix string // without a trailing slash; "" means DefaultPrefix
}

// New returns the layout under prefix ("" means DefaultPrefix).
func New(prefix string) Layout {
	prefix = strings.TrimSuffix(prefix, "/")
	if prefix == "" {
		prefix = DefaultPrefix
	}
	return Layout{Prefix: prefix}
}

func (l Layout) p() string {
	if l.Prefix == "" {
		return DefaultPrefix
	}
	return l.Prefix
}

// Leader is the election prefix of the nimbuses.
func (l Layout) Leader() string { return l.p() + "/nimbus/leader" }

// CodeRecord is codestore's record of a topology's code.
func (l Layout) CodeRecord(topology string) string { return l.p() + "/topologies/" + topology }

// Holders is the prefix of the holder keys of one artifact (codestore).
func (l Layout) Holders(topology, artifact string) string {
	return l.p() + "/code/" + topology + "/" + artifact + "/"
}

// Specs is the prefix of every Spec; Spec the key of one.
func (l Layout) Specs() string               { return l.p() + "/specs/" }
func (l Layout) Spec(topology string) string { return l.Specs() + topology }

// Assignments is the prefix of every Assignment; Assignment the key of one.
func (l Layout) Assignments() string               { return l.p() + "/assignments/" }
func (l Layout) Assignment(topology string) string { return l.Assignments() + topology }

// Supervisors is the prefix of every SupervisorInfo; Supervisor the key of one.
func (l Layout) Supervisors() string         { return l.p() + "/supervisors/" }
func (l Layout) Supervisor(id string) string { return l.Supervisors() + id }

// Workers is the prefix of every WorkerInfo; Worker the key of one.
func (l Layout) Workers() string { return l.p() + "/workers/" }
func (l Layout) Worker(topology string, s Slot) string {
	return l.Workers() + topology + "/" + s.Supervisor + "/" + strconv.Itoa(s.Port)
}

// Statuses is the prefix of every Status; Status the key of one.
func (l Layout) Statuses() string              { return l.p() + "/status/" }
func (l Layout) Status(topology string) string { return l.Statuses() + topology }

// ErrorReports is the prefix of every WorkerErrors; ErrorReport the key of
// one.
func (l Layout) ErrorReports() string { return l.p() + "/errors/" }
func (l Layout) ErrorReport(topology string, s Slot) string {
	return l.ErrorReports() + topology + "/" + s.Supervisor + "/" + strconv.Itoa(s.Port)
}

// Generation is the key of a topology's Generation record.
func (l Layout) Generation(topology string) string { return l.p() + "/generations/" + topology }

// Credentials is the key of the etcd credential of a topology's workers
// (WorkerCredential), when the cluster's etcd runs with authentication.
func (l Layout) Credentials(topology string) string { return l.p() + "/credentials/" + topology }

// Coordination is the prefix of the coordination store (etcdstore) of
// topologies that name no other.
func (l Layout) Coordination() string { return l.p() + "/coordination" }

// Crashes is the prefix of every Crash; Crash the key of one.
func (l Layout) Crashes() string { return l.p() + "/crashes/" }
func (l Layout) Crash(topology string, s Slot) string {
	return l.Crashes() + topology + "/" + s.Supervisor + "/" + strconv.Itoa(s.Port)
}

// Slot is one worker place: a port of a supervisor.
type Slot struct {
	Supervisor string `json:"supervisor"`
	Port       int    `json:"port"`
}

func (s Slot) String() string { return s.Supervisor + ":" + strconv.Itoa(s.Port) }

// CheckName reports a topology or supervisor name that cannot be part of a
// key.
func CheckName(what, name string) error {
	if name == "" || strings.ContainsAny(name, "/ \t\n") || len(name) > 200 {
		return fmt.Errorf("bad %s name %q: want 1 to 200 characters, no slash or space", what, name)
	}
	return nil
}

// TopologyStatus is whether a topology's sources emit batches.
type TopologyStatus string

const (
	Active   TopologyStatus = "active"
	Inactive TopologyStatus = "inactive"
)

// Spec is what the user asked for: the topology's code, its workers and
// its status. Written by the leader only.
type Spec struct {
	Topology    string         `json:"topology"`
	Artifact    string         `json:"artifact"`    // sha256 of the binary
	Fingerprint string         `json:"fingerprint"` // codestore.Fingerprint of plan and build
	Workers     int            `json:"workers"`
	Status      TopologyStatus `json:"status"`
	// Rebalance counts rebalance requests: an assignment made for an older
	// count is computed afresh rather than kept.
	Rebalance int64     `json:"rebalance"`
	Submitted time.Time `json:"submitted"`
	// Owner is the identity that first submitted the topology
	// ("client:alice"), when the cluster runs with certificates: the
	// nimbus's policy lets it (and admins) change the topology.
	Owner string `json:"owner,omitempty"`
	// Demand is what the topology's executors need of the supervisors
	// (trident.Topology.Demand), nil if it declares nothing: the
	// scheduler places its workers only where they fit.
	Demand *Demand `json:"demand,omitempty"`
}

// Resources is an amount of a machine: CPU in percent of one core (100
// is a core) and memory in MB.
type Resources struct {
	CPU      int `json:"cpu"`
	MemoryMB int `json:"memory_mb"`
}

// Demand is what a topology needs, as trident.Demand: the master
// coordinator's executor (in share 0) and every other executor in the
// order they are dealt to the shares, executor i to share (i+1) mod n.
type Demand struct {
	Master    Resources   `json:"master"`
	Executors []Resources `json:"executors"`
}

// Shares returns what each of n shares (workers) needs, by the rule of
// trident.Share (cluster/cli's tests check that both agree).
func (d *Demand) Shares(n int) []Resources {
	if d == nil || n < 1 {
		return nil
	}
	out := make([]Resources, n)
	out[0].CPU, out[0].MemoryMB = d.Master.CPU, d.Master.MemoryMB
	for i, r := range d.Executors {
		s := &out[(i+1)%n]
		s.CPU += r.CPU
		s.MemoryMB += r.MemoryMB
	}
	return out
}

// Assignment is where a topology runs, with what a supervisor needs to run
// it. Written by the leader only.
type Assignment struct {
	Topology  string         `json:"topology"`
	Artifact  string         `json:"artifact"`
	Status    TopologyStatus `json:"status"`
	Rebalance int64          `json:"rebalance"`
	// Epoch numbers the placements of the topology: it grows whenever
	// its slots or its artifact change, and the workers of one epoch run
	// together (a worker of an older epoch stops, and its writes are
	// fenced by the new epoch's owner generation). A change of Status
	// keeps it.
	Epoch   int64    `json:"epoch"`
	Workers []Worker `json:"workers"` // sorted by slot
	// Unscheduled says why the topology runs nowhere when the scheduler
	// refused it (its workers do not fit the supervisors' capacity).
	Unscheduled string `json:"unscheduled,omitempty"`
	// Signature is the leader nimbus's signature of everything above
	// (SigningBytes), when the cluster runs with certificates: supervisors
	// run nothing a nimbus did not sign.
	Signature *pki.Signature `json:"signature,omitempty"`
}

// Worker is one worker of an Assignment.
type Worker struct {
	Slot
	Executors []string `json:"executors"`
}

// Share returns the index of slot s's worker in the assignment (its
// share of the topology, see trident.Share), or -1.
func (a *Assignment) Share(s Slot) int {
	for i, w := range a.Workers {
		if w.Slot == s {
			return i
		}
	}
	return -1
}

// Has reports whether the assignment runs a worker in slot s.
func (a *Assignment) Has(s Slot) bool {
	for _, w := range a.Workers {
		if w.Slot == s {
			return true
		}
	}
	return false
}

// SupervisorInfo is a live supervisor.
type SupervisorInfo struct {
	ID    string `json:"id"`
	Ports []int  `json:"ports"`
	PID   int    `json:"pid"`
	// LogURL serves its workers' logs: LogURL/logs/<port>.
	LogURL string `json:"log_url,omitempty"`
	// Capacity is what its workers may use together (--cpu-capacity,
	// --memory-capacity); a zero CPU or memory declares no limit.
	Capacity Resources `json:"capacity,omitempty"`
}

// WorkerInfo is a live worker process.
type WorkerInfo struct {
	Topology string `json:"topology"`
	Slot     Slot   `json:"slot"`
	PID      int    `json:"pid"`
	Artifact string `json:"artifact,omitempty"`
	Epoch    int64  `json:"epoch"`
	// Addr is where the worker's transport server listens: the other
	// workers of its topology dial it.
	Addr string `json:"addr,omitempty"`
	// MonitorURL serves the worker's monitor (read-only), if it has one.
	MonitorURL string    `json:"monitor_url,omitempty"`
	Started    time.Time `json:"started"`
}

// Generation is the owner generation of a topology's workers in one
// epoch: the worker that runs the master coordinator acquires it from the
// coordination store once per epoch (a restart in the same epoch reuses
// it) and the other workers run under it.
type Generation struct {
	Topology   string `json:"topology"`
	Epoch      int64  `json:"epoch"`
	Generation uint64 `json:"generation"`
	// Plan is the digest of the topology share 0 built
	// (trident.Topology.PlanDigest); the other shares must have built the
	// same.
	Plan string `json:"plan"`
}

// WorkerCredential is the etcd user and password a topology's workers
// connect with: a role limited to the topology's own keys (package
// etcdauth). Written by the leader nimbus at the first submit, removed at
// kill; readable by nimbuses and supervisors only.
type WorkerCredential struct {
	User     string `json:"user"`
	Password string `json:"password"`
}

// Status is what a topology's worker last reported.
type Status struct {
	Topology   string    `json:"topology"`
	Slot       Slot      `json:"slot"`
	PID        int       `json:"pid"`
	Generation uint64    `json:"generation"`
	Committed  uint64    `json:"committed"`
	Time       time.Time `json:"time"`
}

// WorkerErrors is what a worker last reported of its topology's errors
// (failure.Reported and the like): the most recent ones, oldest first.
type WorkerErrors struct {
	Topology string        `json:"topology"`
	Slot     Slot          `json:"slot"`
	PID      int           `json:"pid"`
	Errors   []ErrorReport `json:"errors"`
}

// ErrorReport is one reported error.
type ErrorReport struct {
	Time      time.Time `json:"time"`
	Component string    `json:"component"`
	Task      int       `json:"task"`
	Error     string    `json:"error"`
}

// MaxErrorReports bounds WorkerErrors.Errors.
const MaxErrorReports = 10

// Crash counts the failures of one slot's worker, as its supervisor saw
// them.
type Crash struct {
	Topology string `json:"topology"`
	Slot     Slot   `json:"slot"`
	Artifact string `json:"artifact"`
	// Failures counts the consecutive failures to start: exits before the
	// supervisor's MinUptime, and failures to fetch or launch the artifact.
	// A worker that stays up resets it.
	Failures int `json:"failures"`
	// Crashes counts every exit the supervisor did not ask for, except a
	// superseded worker's.
	Crashes int       `json:"crashes"`
	Last    string    `json:"last"`
	Time    time.Time `json:"time"`
}

// Encode marshals a record; the records are plain data, so it cannot fail.
func Encode(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Decode unmarshals the record stored at key.
func Decode(key string, b []byte, v any) error {
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("meta: bad record at %s: %w", key, err)
	}
	return nil
}

// ParseSlotKey reads "<supervisor>/<port>", the tail of a Worker or Crash
// key after the topology.
func ParseSlotKey(tail string) (Slot, error) {
	i := strings.LastIndexByte(tail, '/')
	if i < 0 {
		return Slot{}, fmt.Errorf("meta: bad slot key %q", tail)
	}
	port, err := strconv.Atoi(tail[i+1:])
	if err != nil {
		return Slot{}, fmt.Errorf("meta: bad slot key %q: %w", tail, err)
	}
	return Slot{Supervisor: tail[:i], Port: port}, nil
}

// Exit codes of a worker process, as its supervisor reads them.
const (
	// ExitStopped: the worker stopped because it was asked to (a signal,
	// or its slot left the assignment).
	ExitStopped = 0
	// ExitSuperseded: the topology was taken over by a newer worker (the
	// coordination store fenced this one). Not a crash.
	ExitSuperseded = 17
	// ExitReassigned: the topology's workers were placed anew (a new
	// epoch); the supervisor starts the slot's worker again at once if
	// the slot is still assigned. Not a crash.
	ExitReassigned = 18
)
