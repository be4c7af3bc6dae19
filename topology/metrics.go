package topology

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/squallstream/squall/internal/hist"
)

// Stats is a snapshot of a running topology's counters, cumulative across
// worker restarts. Executors publish their counters whenever they flush
// output, so a snapshot lags the work by at most one batch per executor.
type Stats struct {
	Components map[string]ComponentStats // by component id; ackers under "__acker"
}

// ComponentStats are one component's counters, summed over its tasks, and
// each task's own.
type ComponentStats struct {
	Emitted uint64 // emit calls (one per call, whatever the number of targets)
	// Transferred counts tuples sent to target tasks: an emit to three
	// tasks transfers three.
	Transferred uint64
	Executed    uint64 // bolts: tuples executed
	Acked       uint64 // spouts: trees completed; bolts: tuples acked
	Failed      uint64 // spouts: trees failed, timeouts included; bolts: tuples failed
	TimedOut    uint64 // spouts: trees that timed out
	Errors      uint64 // errors reported
	// Orphans counts, for ackers, trees that timed out before their spout
	// announced them (acks that arrived after the tree had already timed
	// out, for example); for spouts, outcomes for trees they no longer
	// track.
	Orphans uint64
	// CompleteLatency summarises, for spouts, the time from emit to ack.
	CompleteLatency Latency
	// ExecuteLatency summarises, for bolts, the time Execute takes per
	// tuple: the clock is read once per batch of tuples an executor
	// receives, so each tuple counts as its batch's mean.
	ExecuteLatency Latency
	// Busy is, for bolts, the time the component's executors spent
	// executing batches of tuples (their summed execute latency). Over a
	// window, Busy's growth / (window × Executors) is the component's
	// capacity, as Storm computes it: 1 means its executors never waited
	// for input.
	Busy time.Duration
	// Executors is the number of the component's executors this process
	// runs.
	Executors int
	// Tasks are the counters of each task of the component that this
	// process runs, by ascending task id; the fields above are their sums.
	Tasks []TaskStats
}

// TaskStats are one task's counters; the fields mean what they mean in
// ComponentStats.
type TaskStats struct {
	Task        TaskID
	Emitted     uint64
	Transferred uint64
	Executed    uint64
	Acked       uint64
	Failed      uint64
	TimedOut    uint64
	Errors      uint64
	Orphans     uint64
}

// Latency summarises a latency distribution. Quantiles are accurate to
// about 7%; the maximum, the sum and the bucket counts are exact.
type Latency struct {
	Count uint64
	P50   time.Duration
	P99   time.Duration
	Max   time.Duration
	Sum   time.Duration // of every latency recorded
	// Buckets count, for fixed bounds (the powers of two from 8.192µs to
	// 68.7s), the latencies below each bound; nil when Count is 0.
	Buckets []LatencyBucket
}

// LatencyBucket counts the latencies below a bound.
type LatencyBucket struct {
	Below time.Duration
	Count uint64
}

// LatencyOf converts a summary of the runtime's histogram; Trident's
// runtime uses it for its batch latencies.
func latencyOf(s hist.Summary) Latency {
	l := Latency{Count: s.Count, P50: s.P50, P99: s.P99, Max: s.Max, Sum: s.Sum}
	if s.Count == 0 {
		return l
	}
	l.Buckets = make([]LatencyBucket, len(hist.Bounds))
	for i, b := range hist.Bounds {
		l.Buckets[i] = LatencyBucket{Below: b, Count: s.Below[i]}
	}
	return l
}

// counts are one task's unpublished counters.
type counts struct {
	emitted, transferred, executed, acked, failed, timedOut, errors, orphans uint64
}

// taskMetrics are one task's published counters.
type taskMetrics struct {
	emitted, transferred, executed, acked, failed, timedOut, errors, orphans atomic.Uint64
}

type componentMetrics struct {
	first   TaskID         // the id of tasks[0]
	tasks   []taskMetrics  // by task id - first
	local   []bool         // by task id - first: the task runs in this process
	latency hist.Histogram // spouts: complete latency
	execute hist.Histogram // bolts: execute latency
	busy    atomic.Int64   // bolts: nanoseconds executing
	execs   int            // executors in this process
}

// metrics holds every component's counters for one submitted topology.
type metrics struct {
	byComponent map[string]*componentMetrics // fixed at creation
}

func newMetrics(p *plan) *metrics {
	m := &metrics{byComponent: make(map[string]*componentMetrics)}
	lo, hi := make(map[string]TaskID), make(map[string]TaskID)
	for _, e := range p.execs {
		name := e.name()
		for _, t := range e.tasks { // a component's tasks have consecutive ids
			if l, ok := lo[name]; !ok || t < l {
				lo[name] = t
			}
			if h, ok := hi[name]; !ok || t > h {
				hi[name] = t
			}
		}
	}
	for name, l := range lo {
		n := hi[name] - l + 1
		m.byComponent[name] = &componentMetrics{first: l, tasks: make([]taskMetrics, n), local: make([]bool, n)}
	}
	for i, e := range p.execs {
		if p.local(i) {
			cm := m.byComponent[e.name()]
			cm.execs++
			for _, t := range e.tasks {
				cm.local[t-cm.first] = true
			}
		}
	}
	return m
}

func (m *metrics) component(name string) *componentMetrics { return m.byComponent[name] }

// publish adds the counters of the tasks first, first+1, ... of one
// executor and zeroes them.
func (m *metrics) publish(name string, first TaskID, cs []counts) {
	cm := m.byComponent[name]
	for i := range cs {
		c := &cs[i]
		if *c == (counts{}) {
			continue
		}
		tm := &cm.tasks[first+TaskID(i)-cm.first]
		add := func(dst *atomic.Uint64, v uint64) {
			if v != 0 {
				dst.Add(v)
			}
		}
		add(&tm.emitted, c.emitted)
		add(&tm.transferred, c.transferred)
		add(&tm.executed, c.executed)
		add(&tm.acked, c.acked)
		add(&tm.failed, c.failed)
		add(&tm.timedOut, c.timedOut)
		add(&tm.errors, c.errors)
		add(&tm.orphans, c.orphans)
		*c = counts{}
	}
}

func (m *metrics) snapshot() Stats {
	s := Stats{Components: make(map[string]ComponentStats, len(m.byComponent))}
	for name, cm := range m.byComponent {
		cs := ComponentStats{CompleteLatency: latencyOf(cm.latency.Summary()),
			ExecuteLatency: latencyOf(cm.execute.Summary()), Busy: time.Duration(cm.busy.Load()),
			Executors: cm.execs, Tasks: make([]TaskStats, 0, len(cm.tasks))}
		for i := range cm.tasks {
			if !cm.local[i] {
				continue
			}
			tm := &cm.tasks[i]
			ts := TaskStats{Task: cm.first + TaskID(i),
				Emitted: tm.emitted.Load(), Transferred: tm.transferred.Load(), Executed: tm.executed.Load(),
				Acked: tm.acked.Load(), Failed: tm.failed.Load(), TimedOut: tm.timedOut.Load(),
				Errors: tm.errors.Load(), Orphans: tm.orphans.Load()}
			cs.Tasks = append(cs.Tasks, ts)
			cs.Emitted += ts.Emitted
			cs.Transferred += ts.Transferred
			cs.Executed += ts.Executed
			cs.Acked += ts.Acked
			cs.Failed += ts.Failed
			cs.TimedOut += ts.TimedOut
			cs.Errors += ts.Errors
			cs.Orphans += ts.Orphans
		}
		s.Components[name] = cs
	}
	return s
}

// errorLog keeps the most recent reported errors.
type errorLog struct {
	mu   sync.Mutex
	errs []ReportedError
	next int
	full bool
}

// ReportedError is an error a spout or bolt reported, or a reported failure.
type ReportedError struct {
	Component string
	Task      TaskID
	Time      time.Time
	Err       error
}

const errorLogSize = 100

func (l *errorLog) add(e ReportedError) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.errs == nil {
		l.errs = make([]ReportedError, errorLogSize)
	}
	l.errs[l.next] = e
	l.next = (l.next + 1) % errorLogSize
	if l.next == 0 {
		l.full = true
	}
}

// recent returns the kept errors, oldest first.
func (l *errorLog) recent() []ReportedError {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.full {
		return append([]ReportedError(nil), l.errs[:l.next]...)
	}
	return append(append([]ReportedError(nil), l.errs[l.next:]...), l.errs[:l.next]...)
}
