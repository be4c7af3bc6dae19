package monitor

import (
	"slices"
	"strings"
	"time"

	"github.com/squallstream/squall/topology"
)

// The JSON documents of the REST API. Field names are stable: fields may
// be added, never renamed or removed within /api/v1. Times are RFC 3339
// in UTC, durations are seconds.

// TopologySummary is one topology of GET /api/v1/topologies.
type TopologySummary struct {
	Name         string    `json:"name"`
	Kind         string    `json:"kind"` // "trident" or "topology" (tuple level)
	Status       Status    `json:"status"`
	Ready        bool      `json:"ready"` // Status is "running"
	RegisteredAt time.Time `json:"registered_at"`
	// PendingTrees is the number of tuple trees the runtime waits on (for
	// Trident: batch announcements and commits in flight).
	PendingTrees int64  `json:"pending_trees"`
	Crashes      int    `json:"crashes"`     // worker crashes so far
	ErrorCount   uint64 `json:"error_count"` // errors reported, summed over components
	// Batches holds the batch figures of a Trident topology; null for a
	// tuple-level one.
	Batches    *BatchesView `json:"batches"`
	LastAction *Action      `json:"last_action"` // null until an action is taken through the API
	// Active is whether the spouts are asked to emit (Trident: whether
	// batches are started); null for a topology that cannot tell.
	Active *bool `json:"active"`
}

// BatchesView is a Trident topology's batch figures.
type BatchesView struct {
	CommittedTxID uint64 `json:"committed_txid"` // the last committed txid
	// InFlight is the number of batches announced and not yet committed
	// (or failed), as of the coordinator's last action.
	InFlight int64 `json:"in_flight"`
	// FencingRejections counts writes rejected because a newer owner
	// generation of the topology had written.
	FencingRejections uint64 `json:"fencing_rejections"`
	// Announced counts the batch attempts announced since submission, and
	// Replayed those of them at a txid tried before.
	Announced uint64 `json:"announced"`
	Replayed  uint64 `json:"replayed"`
	// Committed is the number of batches committed since the topology was
	// submitted in this process.
	Committed uint64 `json:"committed"`
	// FailedAttempts counts failed batch attempts and failed master
	// actions (store or spout calls) since submission.
	FailedAttempts uint64 `json:"failed_attempts"`
	DeadLetters    uint64 `json:"dead_letters"` // tuples rejected to the dead letters, replays included
	Quarantined    uint64 `json:"quarantined"`  // corrupt stored values moved to the quarantine
	Generation     uint64 `json:"generation"`   // the owner generation this process holds
	Halted         bool   `json:"halted"`
	HaltError      string `json:"halt_error,omitempty"` // why it halted
	// Latency is the time from a batch's announcement to the end of its
	// commit, over the batches committed since submission.
	Latency LatencyView `json:"latency"`
	// CommitLatency is the time from the start of a batch's commit phase
	// to the end of its state writes.
	CommitLatency LatencyView `json:"commit_latency"`
}

// LatencyView summarises a latency distribution; quantiles are accurate
// to about 7%, the maximum exactly.
type LatencyView struct {
	Count      uint64  `json:"count"`
	P50Seconds float64 `json:"p50_seconds"`
	P99Seconds float64 `json:"p99_seconds"`
	MaxSeconds float64 `json:"max_seconds"`
}

// TopologyDetail is GET /api/v1/topologies/{name}.
type TopologyDetail struct {
	TopologySummary
	Worker     WorkerView      `json:"worker"`
	Components []ComponentView `json:"components"` // sorted by name
	// Errors are the most recently reported errors (at most 100), oldest
	// first.
	Errors []ErrorView `json:"errors"`
	// Lag is the lag of the source partitions, sorted by partition; null
	// when the topology was registered without a LagSource.
	Lag []PartitionLag `json:"lag"`
	// Sources are the sources' counters; null when the topology was
	// registered without a SourceStats.
	Sources *SourceCounters `json:"sources"`
	// Graph is the topology's components and streams; null when the
	// topology cannot tell them (it does not implement Grapher).
	Graph *GraphView `json:"graph"`
	// Windows are the counters' growth over the last 10 minutes, 3 hours
	// and day, and since submission ("all"), in that order.
	Windows []WindowView `json:"windows"`
	// Config is the configuration the topology runs with; null for a
	// topology that cannot tell it.
	Config *ConfigView `json:"config"`
	// States are the counters of the persistent states a Trident topology
	// writes, sorted by name; null for a tuple-level topology.
	States []StateView `json:"states"`
}

// WindowView is how much the counters grew over a window.
type WindowView struct {
	Window string `json:"window"` // "10m", "3h", "1d" or "all"
	// Seconds is the time the figures cover: the window's length, or up
	// to one step of its ring (10 s, 1 min, 10 min) plus one sampling
	// interval longer, or less while the topology has been registered for
	// less; for "all", the time since it was registered (the figures
	// themselves count from submission).
	Seconds float64 `json:"seconds"`
	// Batches is the growth of the batch counters; null for a tuple-level
	// topology.
	Batches *WindowBatchesView `json:"batches"`
	// Emitted, Executed, Failed and Errors are summed over the
	// components.
	Emitted    uint64                `json:"emitted"`
	Executed   uint64                `json:"executed"`
	Failed     uint64                `json:"failed"`
	Errors     uint64                `json:"errors"`
	Components []WindowComponentView `json:"components"` // sorted by name
}

// WindowBatchesView is the growth of a Trident topology's batch counters.
type WindowBatchesView struct {
	Committed      uint64 `json:"committed"`
	FailedAttempts uint64 `json:"failed_attempts"`
	DeadLetters    uint64 `json:"dead_letters"`
}

// WindowComponentView is the growth of one component's counters.
type WindowComponentView struct {
	Name     string `json:"name"`
	Emitted  uint64 `json:"emitted"`
	Executed uint64 `json:"executed"`
	Acked    uint64 `json:"acked"`
	Failed   uint64 `json:"failed"`
	Errors   uint64 `json:"errors"`
}

func windowViews(ws []window, trident bool) []WindowView {
	vs := make([]WindowView, 0, len(ws))
	for _, w := range ws {
		v := WindowView{Window: w.Name, Seconds: w.Span.Seconds(), Components: make([]WindowComponentView, 0, len(w.Growth.Components))}
		if trident {
			b := w.Growth.Batches
			v.Batches = &WindowBatchesView{Committed: b.Committed, FailedAttempts: b.FailedAttempts, DeadLetters: b.DeadLetters}
		}
		for name, c := range w.Growth.Components {
			v.Components = append(v.Components, WindowComponentView{Name: name, Emitted: c.Emitted, Executed: c.Executed, Acked: c.Acked, Failed: c.Failed, Errors: c.Errors})
			v.Emitted += c.Emitted
			v.Executed += c.Executed
			v.Failed += c.Failed
			v.Errors += c.Errors
		}
		slices.SortFunc(v.Components, func(a, b WindowComponentView) int { return strings.Compare(a.Name, b.Name) })
		vs = append(vs, v)
	}
	return vs
}

// WorkerView is the supervisor's view of the process's worker.
type WorkerView struct {
	Running   bool       `json:"running"`
	Crashes   int        `json:"crashes"`
	LastCrash *CrashView `json:"last_crash"` // null if it never crashed
}

// CrashView is a worker crash.
type CrashView struct {
	Component string    `json:"component"`
	Task      int32     `json:"task"`
	Time      time.Time `json:"time"`
	Error     string    `json:"error"`
	Stack     string    `json:"stack,omitempty"` // of the panicking goroutine
}

// ComponentView is one component's counters, summed over its tasks and
// cumulative across worker restarts.
type ComponentView struct {
	Name        string `json:"name"`
	Emitted     uint64 `json:"emitted"`     // emit calls
	Transferred uint64 `json:"transferred"` // tuples sent to target tasks
	Executed    uint64 `json:"executed"`    // bolts: tuples executed
	Acked       uint64 `json:"acked"`       // spouts: trees completed; bolts: tuples acked
	Failed      uint64 `json:"failed"`      // spouts: trees failed (timeouts included); bolts: tuples failed
	TimedOut    uint64 `json:"timed_out"`   // spouts: trees that timed out
	ErrorCount  uint64 `json:"error_count"`
	Orphans     uint64 `json:"orphans"`
	// CompleteLatency is, for spouts, the time from emit to ack; null for
	// components that completed no tree.
	CompleteLatency *LatencyView `json:"complete_latency"`
	// ExecuteLatency is, for bolts, the time Execute takes per tuple
	// (each tuple counting as its batch's mean); null for components
	// that executed nothing.
	ExecuteLatency *LatencyView `json:"execute_latency"`
	// BusySeconds is, for bolts, the time the executors spent executing.
	BusySeconds float64 `json:"busy_seconds"`
	Executors   int     `json:"executors"` // the component's executors in this process
}

// ComponentDetail is GET /api/v1/topologies/{name}/components/{component}.
type ComponentDetail struct {
	Topology string `json:"topology"`
	ComponentView
	Tasks  []TaskView  `json:"tasks"`  // the counters of each task this process runs, by task id
	Errors []ErrorView `json:"errors"` // this component's kept errors, oldest first
}

// TaskView is one task's counters; the fields mean what they mean in
// ComponentView.
type TaskView struct {
	Task        int32  `json:"task"`
	Emitted     uint64 `json:"emitted"`
	Transferred uint64 `json:"transferred"`
	Executed    uint64 `json:"executed"`
	Acked       uint64 `json:"acked"`
	Failed      uint64 `json:"failed"`
	TimedOut    uint64 `json:"timed_out"`
	ErrorCount  uint64 `json:"error_count"`
	Orphans     uint64 `json:"orphans"`
}

// taskViews returns the tasks' documents: their declared figures, and
// the counters no metric exports.
func taskViews(ts []topology.TaskStats, f *figureSet) []TaskView {
	vs := make([]TaskView, 0, len(ts))
	for _, t := range ts {
		v := TaskView{Task: int32(t.Task), TimedOut: t.TimedOut, ErrorCount: t.Errors, Orphans: t.Orphans}
		fill(&v, f.task, t)
		vs = append(vs, v)
	}
	return vs
}

// ErrorView is a reported error.
type ErrorView struct {
	Component string    `json:"component"`
	Task      int32     `json:"task"`
	Time      time.Time `json:"time"`
	Error     string    `json:"error"`
}

// TopologyList is GET /api/v1/topologies.
type TopologyList struct {
	Topologies []TopologySummary `json:"topologies"` // sorted by name
}

// ActionResult is the answer to a POST action.
type ActionResult struct {
	Topology string `json:"topology"`
	Action   Action `json:"action"`
	Status   Status `json:"status"` // after the action
}

// summary returns r's topology as listed; the declared figures fill
// their fields.
func (r *reading) summary() TopologySummary {
	e := r.e
	s := TopologySummary{
		Name: e.t.Name(), Kind: "topology", Status: r.status,
		RegisteredAt: e.added.UTC(), LastAction: e.lastAction(),
	}
	for _, c := range r.stats.Components {
		s.ErrorCount += c.Errors
	}
	if b := r.batches; b != nil {
		s.Kind = "trident"
		s.Batches = batchesView(b)
	}
	fill(&s, e.figs.topology, r)
	return s
}

// batchesView returns a Trident topology's batch document before the
// declared figures fill it: what no metric exports.
func batchesView(b Batches) *BatchesView {
	v := &BatchesView{}
	if err := b.Err(); err != nil {
		v.HaltError = err.Error()
	}
	return v
}

// detail returns r's topology in full; the declared figures fill their
// fields.
func (r *reading) detail() TopologyDetail {
	e, h := r.e, r.health
	d := TopologyDetail{
		TopologySummary: r.summary(),
		Worker:          WorkerView{Crashes: h.Crashes},
		Components:      r.componentViews(),
		Errors:          errorViews(e.t.Errors(), ""),
	}
	if c := h.LastCrash; c != nil {
		cv := &CrashView{Component: c.Component, Task: int32(c.Task), Time: c.Time.UTC(), Stack: string(c.Stack)}
		if c.Err != nil {
			cv.Error = c.Err.Error()
		}
		d.Worker.LastCrash = cv
	}
	if e.opts.Sources != nil {
		c := e.opts.Sources.SourceCounters()
		d.Sources = &c
	}
	if e.graph != nil {
		d.Graph = graphView(e.graph.Graph())
	}
	d.Config = configOf(e.t)
	if _, ok := e.t.(StateCounter); ok {
		d.States = stateViews(r.states(), e.figs)
	}
	d.Windows = windowViews(e.windowsAt(e.clock.Now(), totalsOf(r.stats, r.batches)), r.batches != nil)
	fill(&d, e.figs.topology, r)
	return d
}

func sortedLag(ls []PartitionLag) []PartitionLag {
	ls = slices.Clone(ls)
	if ls == nil {
		ls = []PartitionLag{}
	}
	slices.SortFunc(ls, func(a, b PartitionLag) int { return strings.Compare(a.Partition, b.Partition) })
	return ls
}

// componentViews returns the components' documents, sorted by name.
func (r *reading) componentViews() []ComponentView {
	cs := make([]ComponentView, 0, len(r.stats.Components))
	for name, c := range r.stats.Components {
		cs = append(cs, r.componentView(name, c))
	}
	slices.SortFunc(cs, func(a, b ComponentView) int { return strings.Compare(a.Name, b.Name) })
	return cs
}

// componentView returns one component's document: its declared figures,
// and the counters no metric exports.
func (r *reading) componentView(name string, c topology.ComponentStats) ComponentView {
	v := ComponentView{Name: name, Orphans: c.Orphans}
	fill(&v, r.e.figs.component, componentReading{top: r, name: name, stats: c})
	return v
}

// errorViews converts errs, keeping only component's if it is not empty.
func errorViews(errs []topology.ReportedError, component string) []ErrorView {
	vs := make([]ErrorView, 0, len(errs))
	for _, e := range errs {
		if component != "" && e.Component != component {
			continue
		}
		v := ErrorView{Component: e.Component, Task: int32(e.Task), Time: e.Time.UTC()}
		if e.Err != nil {
			v.Error = e.Err.Error()
		}
		vs = append(vs, v)
	}
	return vs
}

func latencyView(l topology.Latency) LatencyView {
	return LatencyView{Count: l.Count, P50Seconds: l.P50.Seconds(), P99Seconds: l.P99.Seconds(), MaxSeconds: l.Max.Seconds()}
}
