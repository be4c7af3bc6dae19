package trident

import (
	"time"

	"github.com/squallstream/squall/internal/hist"
	"github.com/squallstream/squall/topology"
)

// latencies records batch latencies, from the announcement of a batch's
// committed attempt to the end of its commit, in the project's one latency
// histogram.
type latencies struct{ h hist.Histogram }

func (l *latencies) record(d time.Duration) { l.h.Record(d) }

// summary returns the count and quantiles of every recorded latency.
func (l *latencies) summary() topology.Latency {
	s := l.h.Summary()
	return topology.Latency{Count: s.Count, P50: s.P50, P99: s.P99, Max: s.Max}
}

// BatchLatency summarises how long every committed batch since Submit took
// from its announcement to the end of its commit; quantiles are accurate
// to about 7%, the maximum exactly.
func (r *Running) BatchLatency() topology.Latency { return r.status.latency.summary() }
