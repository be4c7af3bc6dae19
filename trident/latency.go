package trident

import "github.com/squallstream/squall/topology"

// BatchLatency summarises how long every committed batch since Submit took
// from its announcement to the end of its commit; quantiles are accurate
// to about 7%, the maximum exactly.
func (r *Running) BatchLatency() topology.Latency {
	return r.status.BatchLatency()
}

// CommitLatency summarises how long the commit phase of every committed
// batch since Submit took: from the start of the commit (the freeze of
// the sources' metadata) to the end of the state writes.
func (r *Running) CommitLatency() topology.Latency {
	return r.status.CommitLatency()
}

// Announced returns the number of batch attempts announced since Submit.
func (r *Running) Announced() uint64 { return r.status.Announced() }

// Replayed returns how many of the announced attempts were replays: a
// txid tried before, by this process or an earlier one.
func (r *Running) Replayed() uint64 { return r.status.Replayed() }
