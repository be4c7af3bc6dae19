package trident

import (
	"slices"
	"sync"
	"time"

	"github.com/squallstream/squall/topology"
)

// latencies keeps the most recent batch latencies: from the announcement
// of a batch's committed attempt to the end of its commit.
type latencies struct {
	mu    sync.Mutex
	ring  []time.Duration
	next  int
	count uint64
}

const latencyWindow = 4096

func (l *latencies) record(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.ring) < latencyWindow {
		l.ring = append(l.ring, d)
	} else {
		l.ring[l.next] = d
		l.next = (l.next + 1) % latencyWindow
	}
	l.count++
}

// summary returns quantiles over the kept window and the total count.
func (l *latencies) summary() topology.Latency {
	l.mu.Lock()
	sorted := slices.Clone(l.ring)
	n := l.count
	l.mu.Unlock()
	if len(sorted) == 0 {
		return topology.Latency{}
	}
	slices.Sort(sorted)
	at := func(q float64) time.Duration { return sorted[int(q*float64(len(sorted)-1))] }
	return topology.Latency{Count: n, P50: at(0.50), P99: at(0.99), Max: sorted[len(sorted)-1]}
}

// BatchLatency summarises how long the last (up to 4096) committed batches
// took from their announcement to the end of their commit.
func (r *Running) BatchLatency() topology.Latency { return r.status.latency.summary() }
