package monitor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/squallstream/squall/internal/clock"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident"
	"github.com/squallstream/squall/txn"
)

// Topology is what the monitor needs from a running topology; both
// *topology.Running and *trident.Running implement it.
type Topology interface {
	Name() string
	Stats() topology.Stats
	Health() topology.Health
	Errors() []topology.ReportedError
	Pending() int64
	Activate()
	Deactivate()
	Stop(ctx context.Context) error
	Done() <-chan struct{}
}

// Batches is what a Trident topology adds to Topology; the registry finds
// it by type assertion. *trident.Running implements it.
type Batches interface {
	Committed() txn.TxID
	FailedAttempts() uint64
	Rejected() uint64
	Quarantined() uint64
	Announced() uint64
	Replayed() uint64
	BatchLatency() topology.Latency
	CommitLatency() topology.Latency
	Generation() state.Generation
	Halted() <-chan struct{}
	Err() error
}

var (
	_ Topology = (*topology.Running)(nil)
	_ Topology = (*trident.Running)(nil)
	_ Batches  = (*trident.Running)(nil)
)

// PartitionLag is how far a source's partition is behind the end of its
// log, as of the last batch that read it.
type PartitionLag struct {
	Partition string `json:"partition"` // e.g. "events@3" (topic@partition)
	Next      int64  `json:"next"`      // the offset after the last batch
	LogEnd    int64  `json:"log_end"`   // the end of the log at that batch
	Lag       int64  `json:"lag"`       // LogEnd - Next
}

// LagSource reports the lag of a topology's source partitions, such as a
// Kafka spout's (spouts/kafka Spout.Stats().Partitions).
type LagSource interface {
	Lag() []PartitionLag
}

// LagFunc adapts a function to LagSource.
type LagFunc func() []PartitionLag

// Lag calls f.
func (f LagFunc) Lag() []PartitionLag { return f() }

// SourceCounters are counters of a topology's sources since they
// started, such as a Kafka spout's (spouts/kafka Spout.Stats()).
type SourceCounters struct {
	// DeadLettered counts the records the sources rejected to their own
	// dead letters (the Kafka spout's dead-letter topic: Stats().DeadLettered).
	DeadLettered uint64 `json:"dead_lettered"`
}

// SourceStats reports the counters of a topology's sources.
type SourceStats interface {
	SourceCounters() SourceCounters
}

// SourceStatsFunc adapts a function to SourceStats.
type SourceStatsFunc func() SourceCounters

// SourceCounters calls f.
func (f SourceStatsFunc) SourceCounters() SourceCounters { return f() }

// Options are the optional parts of a registered topology. The zero
// Options is ready to use.
type Options struct {
	// Lag reports the lag of the topology's source partitions. Nil means
	// none is shown.
	Lag LagSource
	// Sources reports the counters of the topology's sources. Nil means
	// none are shown.
	Sources SourceStats
}

// ErrDuplicate is returned by Registry.Add for a name already registered.
var ErrDuplicate = errors.New("monitor: a topology of that name is already registered")

// Registry holds the topologies of this process that the monitor shows.
// It is safe for concurrent use. The zero Registry is not usable: call
// NewRegistry.
type Registry struct {
	mu      sync.Mutex
	entries map[string]*entry
	clock   clock.Clock
	figs    *figureSet // the declared figures
}

// entry is one registered topology.
type entry struct {
	t       Topology
	batches Batches // nil for a tuple-level topology
	graph   Grapher // nil if the topology cannot tell its graph
	opts    Options
	added   time.Time
	clock   clock.Clock // the registry's
	figs    *figureSet  // the registry's

	mu   sync.Mutex
	last *Action  // the last action taken through the API
	win  *windows // snapshots of the counters, for the windowed figures
}

// Action is an action an operator took through the API.
type Action struct {
	Name  string    `json:"action"` // "activate", "deactivate" or "kill"
	Time  time.Time `json:"time"`
	Error string    `json:"error,omitempty"` // what it returned, if it failed
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{entries: make(map[string]*entry), clock: clock.Real(), figs: newFigureSet()}
}

// Add registers t under t.Name(). A topology stays registered after it
// stops (it then shows as stopped and makes the process not ready) until
// Remove.
func (g *Registry) Add(t Topology, o Options) error {
	if t == nil {
		return errors.New("monitor: Add: nil topology")
	}
	name := t.Name()
	if name == "" {
		return errors.New("monitor: Add: the topology has no name")
	}
	now := g.clock.Now()
	e := &entry{t: t, opts: o, added: now, clock: g.clock, figs: g.figs, win: newWindows()}
	e.batches, _ = t.(Batches)
	e.graph, _ = t.(Grapher)
	e.sample(now)
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, dup := g.entries[name]; dup {
		return fmt.Errorf("%w: %q", ErrDuplicate, name)
	}
	g.entries[name] = e
	return nil
}

// Remove unregisters the named topology; it reports whether it was
// registered. It does not stop it.
func (g *Registry) Remove(name string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	_, ok := g.entries[name]
	delete(g.entries, name)
	return ok
}

// Names returns the registered names, sorted.
func (g *Registry) Names() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	names := make([]string, 0, len(g.entries))
	for n := range g.entries {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// lookup returns the named entry, or nil.
func (g *Registry) lookup(name string) *entry {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.entries[name]
}

// all returns the entries sorted by name.
func (g *Registry) all() []*entry {
	g.mu.Lock()
	defer g.mu.Unlock()
	es := make([]*entry, 0, len(g.entries))
	for _, e := range g.entries {
		es = append(es, e)
	}
	slices.SortFunc(es, func(a, b *entry) int { return strings.Compare(a.t.Name(), b.t.Name()) })
	return es
}

// Status is what a registered topology is doing.
type Status string

// The statuses, from the topology's exported state.
const (
	// StatusRunning: a worker runs, and (for Trident) the topology has
	// not halted.
	StatusRunning Status = "running"
	// StatusRestarting: the worker crashed and the supervisor waits to
	// restart it.
	StatusRestarting Status = "restarting"
	// StatusHalted: a Trident topology halted for good (attempt limit
	// reached, or superseded by a newer owner); it idles until stopped.
	StatusHalted Status = "halted"
	// StatusStopped: the topology was stopped.
	StatusStopped Status = "stopped"
)

// status returns e's status now.
func (e *entry) status() Status {
	if closed(e.t.Done()) {
		return StatusStopped
	}
	if e.batches != nil && closed(e.batches.Halted()) {
		return StatusHalted
	}
	if !e.t.Health().Running {
		return StatusRestarting
	}
	return StatusRunning
}

// Ready reports whether every registered topology runs and none has
// halted; with none registered it is true.
func (g *Registry) Ready() bool {
	for _, e := range g.all() {
		if e.status() != StatusRunning {
			return false
		}
	}
	return true
}

// DefaultSampleInterval is how often Server.Start's sampler records the
// counters for the windowed figures.
const DefaultSampleInterval = 10 * time.Second

// Sample records the counters of every registered topology now, for the
// windowed figures (10 minutes, 3 hours, a day) of the topology page and
// GET /api/v1/topologies/{name}. Server.Start calls it every
// DefaultSampleInterval; a program that mounts Server.Handler itself runs
// SampleEvery. A snapshot less than 10 seconds after the previous one
// kept is dropped, so extra calls cost little.
func (g *Registry) Sample() {
	now := g.clock.Now()
	for _, e := range g.all() {
		e.sample(now)
	}
}

// SampleEvery calls Sample every d until ctx is done.
func (g *Registry) SampleEvery(ctx context.Context, d time.Duration) {
	t := g.clock.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			g.Sample()
		}
	}
}

// sample records e's counters at now.
func (e *entry) sample(now time.Time) {
	s := snapshot{At: now, Totals: totalsOf(e.t.Stats(), e.batches)}
	e.mu.Lock()
	e.win.record(s)
	e.mu.Unlock()
}

// windowsAt returns e's windowed figures at now, whose counters are cur.
func (e *entry) windowsAt(now time.Time, cur totals) []window {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.win.windowsAt(now, cur)
}

func (e *entry) setLast(a Action) {
	e.mu.Lock()
	e.last = &a
	e.mu.Unlock()
}

func (e *entry) lastAction() *Action {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.last == nil {
		return nil
	}
	a := *e.last
	return &a
}

func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
