package topology

import (
	"math/bits"
	"sync"
	"sync/atomic"
	"time"
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

// counts are an executor's unpublished counters.
type counts struct {
	emitted, executed, acked, failed, timedOut, errors, orphans uint64
}

type componentMetrics struct {
	emitted, executed, acked, failed, timedOut, errors, orphans atomic.Uint64
	latency                                                     histogram
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
			CompleteLatency: cm.latency.summary(),
		}
	}
	return s
}

// histogram is a log-linear histogram of durations in nanoseconds with 8
// sub-buckets per power of two, safe for concurrent use.
type histogram struct {
	buckets [64 * subBuckets]atomic.Uint64
	max     atomic.Int64
	count   atomic.Uint64
}

const subBits = 3
const subBuckets = 1 << subBits

func bucketOf(v uint64) int {
	if v < subBuckets {
		return int(v)
	}
	e := bits.Len64(v) - 1
	return (e-subBits+1)*subBuckets + int(v>>(e-subBits))&(subBuckets-1)
}

// bucketMid returns a value in the middle of bucket i.
func bucketMid(i int) uint64 {
	if i < subBuckets {
		return uint64(i)
	}
	e := i/subBuckets + subBits - 1
	low := uint64(subBuckets+i%subBuckets) << (e - subBits)
	return low + (uint64(1)<<(e-subBits))/2
}

func (h *histogram) record(d time.Duration) {
	if d < 0 {
		d = 0
	}
	h.buckets[bucketOf(uint64(d))].Add(1)
	h.count.Add(1)
	for {
		m := h.max.Load()
		if int64(d) <= m || h.max.CompareAndSwap(m, int64(d)) {
			return
		}
	}
}

func (h *histogram) summary() Latency {
	n := h.count.Load()
	l := Latency{Count: n, Max: time.Duration(h.max.Load())}
	if n == 0 {
		return l
	}
	l.P50 = h.quantile(n, 0.50)
	l.P99 = h.quantile(n, 0.99)
	return l
}

func (h *histogram) quantile(n uint64, q float64) time.Duration {
	rank := uint64(q*float64(n-1)) + 1
	var seen uint64
	for i := range h.buckets {
		seen += h.buckets[i].Load()
		if seen >= rank {
			return time.Duration(bucketMid(i))
		}
	}
	return time.Duration(h.max.Load())
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
