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

// ComponentStats are one component's counters, summed over its tasks.
type ComponentStats struct {
	Emitted  uint64 // emit calls (one per call, whatever the number of targets)
	Executed uint64 // bolts: tuples executed
	Acked    uint64 // spouts: trees completed; bolts: tuples acked
	Failed   uint64 // spouts: trees failed, timeouts included; bolts: tuples failed
	TimedOut uint64 // spouts: trees that timed out
	Errors   uint64 // errors reported
	// Orphans counts, for ackers, trees that timed out before their spout
	// announced them (acks that arrived after the tree had already timed
	// out, for example); for spouts, outcomes for trees they no longer
	// track.
	Orphans uint64
	// CompleteLatency summarises, for spouts, the time from emit to ack.
	CompleteLatency Latency
}

// Latency summarises a latency distribution. Quantiles are accurate to
// about 7%.
type Latency struct {
	Count uint64
	P50   time.Duration
	P99   time.Duration
	Max   time.Duration
}

// latencyOf converts a histogram summary.
func latencyOf(s hist.Summary) Latency {
	return Latency{Count: s.Count, P50: s.P50, P99: s.P99, Max: s.Max}
}

// counts are an executor's unpublished counters.
type counts struct {
	emitted, executed, acked, failed, timedOut, errors, orphans uint64
}

type componentMetrics struct {
	emitted, executed, acked, failed, timedOut, errors, orphans atomic.Uint64
	latency                                                     hist.Histogram
}

// metrics holds every component's counters for one submitted topology.
type metrics struct {
	byComponent map[string]*componentMetrics // fixed at creation
}

func newMetrics(p *plan) *metrics {
	m := &metrics{byComponent: make(map[string]*componentMetrics)}
	for _, e := range p.execs {
		if m.byComponent[e.name()] == nil {
			m.byComponent[e.name()] = &componentMetrics{}
		}
	}
	return m
}

func (m *metrics) component(name string) *componentMetrics { return m.byComponent[name] }

func (m *metrics) publish(name string, c *counts) {
	if *c == (counts{}) {
		return
	}
	cm := m.byComponent[name]
	add := func(dst *atomic.Uint64, v uint64) {
		if v != 0 {
			dst.Add(v)
		}
	}
	add(&cm.emitted, c.emitted)
	add(&cm.executed, c.executed)
	add(&cm.acked, c.acked)
	add(&cm.failed, c.failed)
	add(&cm.timedOut, c.timedOut)
	add(&cm.errors, c.errors)
	add(&cm.orphans, c.orphans)
	*c = counts{}
}

func (m *metrics) snapshot() Stats {
	s := Stats{Components: make(map[string]ComponentStats, len(m.byComponent))}
	for name, cm := range m.byComponent {
		s.Components[name] = ComponentStats{
			Emitted: cm.emitted.Load(), Executed: cm.executed.Load(),
			Acked: cm.acked.Load(), Failed: cm.failed.Load(), TimedOut: cm.timedOut.Load(),
			Errors: cm.errors.Load(), Orphans: cm.orphans.Load(),
			CompleteLatency: latencyOf(cm.latency.Summary()),
		}
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
