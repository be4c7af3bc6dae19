package trident

import (
	"context"

	"github.com/squallstream/squall/topology"
)

// Name returns the name the topology runs under.
func (r *Running) Name() string { return r.t.name }

// Stop deactivates the sources, waits until no batch is pending or ctx is
// done, and stops the topology; on a local cluster of its own (a nil
// Config.Cluster) it shuts the cluster down too. Batches still pending
// when it stops are not committed: a later submission over the same store
// replays them. Stop returns an error if ctx ended the wait; calling it
// again returns the same error.
func (r *Running) Stop(ctx context.Context) error {
	r.stopOnce.Do(func() {
		defer r.t.closeDRPC()
		if r.cluster == nil { // a share (RunShare)
			r.stopErr = r.run.Stop(ctx)
			return
		}
		if r.private {
			r.stopErr = r.cluster.Shutdown(ctx)
			return
		}
		r.stopErr = r.cluster.Kill(ctx, r.run.Name())
	})
	return r.stopErr
}

// Done is closed once the topology has stopped (after Stop). A topology
// that halted (see Halted) stays running, idle, until it is stopped.
func (r *Running) Done() <-chan struct{} { return r.run.Done() }

// Deactivate stops starting new batches: sources are no longer asked to
// emit; batches in flight still complete or fail.
func (r *Running) Deactivate() { r.run.Deactivate() }

// Activate starts batches again after Deactivate (or after a submission
// with Topology.StartInactive).
func (r *Running) Activate() { r.run.Activate() }

// Health returns the supervisor's view: whether a worker runs, and its
// crashes.
func (r *Running) Health() topology.Health { return r.run.Health() }

// Stats returns a snapshot of the tuple runtime's counters.
func (r *Running) Stats() topology.Stats { return r.run.Stats() }

// Errors returns the most recently reported errors (failure.Reported),
// oldest first.
func (r *Running) Errors() []topology.ReportedError { return r.run.Errors() }

// Pending returns the number of tuple trees the runtime waits on: batch
// announcements and commits in flight, zero once the topology is idle.
func (r *Running) Pending() int64 { return r.run.Pending() }

// Graph returns the components and streams of the generated tuple-level
// topology that runs this one: its coordinator spout ($master), the spouts
// of its sources and the bolts of its planned groups.
func (r *Running) Graph() topology.Graph { return r.run.Graph() }

// Active reports whether batches are started: false after Deactivate (and
// Stop) or a submission with Topology.StartInactive, until Activate.
func (r *Running) Active() bool { return r.run.Active() }

// InFlight returns the number of batches in flight: announced and not yet
// committed, as of the master's last action (an announcement, a commit, a
// batch's completion or failure); at most Config.MaxBatchesInFlight.
func (r *Running) InFlight() int64 { return r.status.InFlight() }

// Config returns the configuration the topology runs with, the zero
// fields replaced by their defaults: Topology is the tuple runtime's
// (topology.Running.Config), with MaxSpoutPending 0 since
// MaxBatchesInFlight plays that role.
func (r *Running) Config() Config {
	c := r.cfg
	c.Topology = r.run.Config()
	if c.MaxBatchesInFlight == 0 {
		c.MaxBatchesInFlight = 1
	}
	c.RetryBackoff, c.MaxRetryBackoff = c.retryBounds()
	return c
}
