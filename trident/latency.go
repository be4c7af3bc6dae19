package trident

import "github.com/squallstream/squall/topology"

// BatchLatency summarises how long every committed batch since Submit took
// from its announcement to the end of its commit; quantiles are accurate
// to about 7%, the maximum exactly.
func (r *Running) BatchLatency() topology.Latency {
	return r.status.BatchLatency()
}
