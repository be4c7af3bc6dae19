package monitor

import (
	"fmt"

	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/transport"
	"github.com/squallstream/squall/trident"
)

// The declared figures: the one place a metric is added. The order of
// the figures with a column is the order of the UI's columns.
// docs/operations.md lists every name (a test checks it).

// topologyFigures are the figures of a whole topology; their REST fields
// are in TopologyDetail (TopologySummary's in the list too), their
// columns in the index page's table.
func topologyFigures() []figure[*reading] {
	return []figure[*reading]{
		{name: "squall_committed_txid", help: "The last committed transaction id.",
			kind: kindGauge, field: "batches.committed_txid", column: "committed txid",
			value: batches(func(b Batches) any { return uint64(b.Committed()) })},
		{name: "squall_batches_committed_total", help: "Batches committed since the topology was submitted in this process.",
			kind: kindCounter, field: "batches.committed", column: "batches committed",
			value: batches(func(b Batches) any { return b.BatchLatency().Count })},
		{name: "squall_batches_failed_total", help: "Failed batch attempts and failed master actions (store or spout calls).",
			kind: kindCounter, field: "batches.failed_attempts", column: "failed attempts",
			value: batches(func(b Batches) any { return b.FailedAttempts() })},
		{name: "squall_dead_letters_total", help: "Dead letters, replays included: origin \"operations\" for tuples Trident operations rejected to Config.DeadLetters, \"source\" for records the sources rejected to their own (the Kafka spout's dead-letter topic).",
			kind: kindCounter, labels: []string{"origin"}, field: "batches.dead_letters", column: "dead letters",
			value: batches(func(b Batches) any { return b.Rejected() }),
			cell:  deadLettersCell,
			series: func(r *reading, emit func(any, ...string)) {
				if r.batches != nil {
					emit(r.batches.Rejected(), "operations")
				}
				if r.e.opts.Sources != nil {
					emit(r.e.opts.Sources.SourceCounters().DeadLettered, "source")
				}
			}},
		{name: "squall_pending_trees", help: "Tuple trees the runtime waits on (for Trident: batch announcements and commits in flight).",
			kind: kindGauge, field: "pending_trees", column: "pending trees",
			value: func(r *reading) (any, bool) { return r.e.t.Pending(), true }},
		{name: "squall_worker_restarts_total", help: "Worker crashes; the supervisor restarts the worker after each, unless the topology stops first.",
			kind: kindCounter, field: "crashes", column: "crashes",
			value: func(r *reading) (any, bool) { return r.health.Crashes, true }},

		{name: "squall_topology_ready", help: "1 if the topology runs (a worker is up and it has not halted or stopped), else 0.",
			kind: kindGauge, field: "ready",
			value: func(r *reading) (any, bool) { return r.status == StatusRunning, true }},
		{name: "squall_worker_running", help: "1 if the topology's worker runs, else 0 (crashed and waiting for its restart, or stopped).",
			kind: kindGauge, field: "worker.running",
			value: func(r *reading) (any, bool) { return r.health.Running, true }},
		{name: "squall_topology_active", help: "1 if the topology's spouts are asked to emit (Trident: batches are started), 0 after a deactivation.",
			kind: kindGauge, field: "active",
			value: func(r *reading) (any, bool) {
				a, ok := r.e.t.(Activity)
				return ok && a.Active(), ok
			}},
		{name: "squall_batches_in_flight", help: "Trident: batches announced and not yet committed or failed, as of the coordinator's last action.",
			kind: kindGauge, field: "batches.in_flight",
			value: func(r *reading) (any, bool) {
				f, ok := r.e.t.(InFlighter)
				if !ok || r.batches == nil {
					return nil, false
				}
				return f.InFlight(), true
			}},
		{name: "squall_batches_emitted_total", help: "Batch attempts announced since the topology was submitted in this process.",
			kind: kindCounter, field: "batches.announced",
			value: batches(func(b Batches) any { return b.Announced() })},
		{name: "squall_batches_replayed_total", help: "Announced batch attempts at a txid that was tried before.",
			kind: kindCounter, field: "batches.replayed",
			value: batches(func(b Batches) any { return b.Replayed() })},
		{name: "squall_batch_latency_quantile_seconds", help: "Time from a batch's announcement to the end of its commit, over the batches committed since submission, by quantile (0.5, 0.99; 1 is the maximum). Quantiles are accurate to about 7%.",
			kind: kindQuantiles, field: "batches.latency", value: batchLatency},
		{name: "squall_batch_latency_seconds", help: "Trident: time from a batch's announcement to the end of its commit, over the batches committed since submission. Buckets at powers of two of nanoseconds (8.192e-06 to 68.72 s); each counts the latencies below its bound.",
			kind: kindHistogram, field: "batches.latency", value: batchLatency},
		{name: "squall_commit_latency_quantile_seconds", help: "Time from the start of a batch's commit phase to the end of its state writes, over the batches committed since submission, by quantile (0.5, 0.99; 1 is the maximum). Quantiles are accurate to about 7%.",
			kind: kindQuantiles, field: "batches.commit_latency", value: commitLatency},
		{name: "squall_commit_latency_seconds", help: "Trident: time from the start of a batch's commit phase to the end of its state writes. Buckets as for squall_batch_latency_seconds.",
			kind: kindHistogram, field: "batches.commit_latency", value: commitLatency},
		{name: "squall_quarantined_total", help: "Corrupt stored values moved to the quarantine, replays included.",
			kind: kindCounter, field: "batches.quarantined",
			value: batches(func(b Batches) any { return b.Quarantined() })},
		{name: "squall_owner_generation", help: "The owner generation this process holds for the topology.",
			kind: kindGauge, field: "batches.generation",
			value: batches(func(b Batches) any { return uint64(b.Generation()) })},
		{name: "squall_topology_halted", help: "1 if the topology halted for good (attempt limit reached, or superseded), else 0.",
			kind: kindGauge, field: "batches.halted",
			value: batches(func(b Batches) any { return closed(b.Halted()) })},
		{name: "squall_fencing_rejections_total", help: "Writes of this submission rejected because a newer owner generation of the topology had written (state opens and commits, coordinator store writes); the first halts the topology.",
			kind: kindCounter, field: "batches.fencing_rejections",
			value: func(r *reading) (any, bool) {
				c, ok := r.e.t.(StateCounter)
				if !ok {
					return nil, false
				}
				return c.FencingRejections(), true
			}},
		{name: "squall_transport_refused_total", help: "Connections the worker's transport server refused or closed, by reason: conn_cap, tls, peer (VerifyPeer), handshake, handshake_timeout, idle, frame_size, budget (a frame over its decoding budget), decode, panic (a value decoder panicked).",
			kind: kindCounter, labels: []string{"reason"},
			series: func(r *reading, emit func(any, ...string)) {
				c, ok := r.e.t.(TransportCounter)
				if !ok {
					return
				}
				st, ok := c.TransportStats()
				if !ok {
					return
				}
				refused := st.RefusedByReason()
				for _, reason := range transport.Reasons() {
					emit(refused[reason], reason)
				}
			}},
		{name: "squall_kafka_consumer_lag", help: "Records between the source partition's last batch and the end of its log, as of that batch.",
			kind: kindGauge, labels: []string{"partition"}, field: "lag",
			value: func(r *reading) (any, bool) {
				if r.e.opts.Lag == nil {
					return nil, false
				}
				return sortedLag(r.e.opts.Lag.Lag()), true
			},
			series: func(r *reading, emit func(any, ...string)) {
				if r.e.opts.Lag == nil {
					return
				}
				seen := make(map[string]bool)
				for _, p := range r.e.opts.Lag.Lag() {
					if seen[p.Partition] { // one series per partition
						continue
					}
					seen[p.Partition] = true
					emit(p.Lag, p.Partition)
				}
			}},
	}
}

// componentFigures are the figures of one component, summed over its
// tasks; their REST fields are in ComponentView, their columns in the
// topology page's components table.
func componentFigures() []figure[componentReading] {
	type c = componentReading
	return []figure[c]{
		{name: "squall_tuples_emitted_total", help: "Emit calls of the component's tasks.",
			kind: kindCounter, field: "emitted", column: "emitted",
			value: func(c c) (any, bool) { return c.stats.Emitted, true }},
		{name: "squall_tuples_transferred_total", help: "Tuples the component's tasks sent to target tasks (an emit to three tasks counts three).",
			kind: kindCounter, field: "transferred",
			value: func(c c) (any, bool) { return c.stats.Transferred, true }},
		{name: "squall_component_executors", help: "Executors of the component that this process runs.",
			kind: kindGauge, field: "executors",
			value: func(c c) (any, bool) { return c.stats.Executors, true }},
		{name: "squall_tuples_executed_total", help: "Tuples the component's bolt tasks executed.",
			kind: kindCounter, field: "executed", column: "executed",
			value: func(c c) (any, bool) { return c.stats.Executed, true }},
		{name: "squall_tuples_acked_total", help: "Spouts: tuple trees completed; bolts: tuples acked.",
			kind: kindCounter, field: "acked", column: "acked",
			value: func(c c) (any, bool) { return c.stats.Acked, true }},
		{name: "squall_tuples_failed_total", help: "Spouts: tuple trees failed, timeouts included; bolts: tuples failed.",
			kind: kindCounter, field: "failed", column: "failed",
			value: func(c c) (any, bool) { return c.stats.Failed, true }},
		{name: "squall_tuples_timed_out_total", help: "Spouts: tuple trees that timed out.",
			kind: kindCounter, field: "timed_out", column: "timed out",
			value: func(c c) (any, bool) { return c.stats.TimedOut, true }},
		{name: "squall_component_errors_total", help: "Errors the component's tasks reported.",
			kind: kindCounter, field: "error_count", column: "errors",
			value: func(c c) (any, bool) { return c.stats.Errors, true }},
		{name: "squall_complete_latency_quantile_seconds", help: "Spouts: time from emit to ack of the trees completed since submission, by quantile (0.5, 0.99; 1 is the maximum). Quantiles are accurate to about 7%.",
			kind: kindQuantiles, field: "complete_latency", column: "complete latency p50 / p99", value: completeLatency},
		{name: "squall_complete_latency_seconds", help: "Spouts: time from emit to ack of the trees completed since submission. Buckets as for squall_batch_latency_seconds.",
			kind: kindHistogram, field: "complete_latency", value: completeLatency},
		{name: "squall_execute_latency_quantile_seconds", help: "Bolts: time Execute took per tuple, by quantile (0.5, 0.99; 1 is the maximum); measured per batch of tuples, each tuple counting as its batch's mean. Quantiles are accurate to about 7%.",
			kind: kindQuantiles, field: "execute_latency", value: executeLatency},
		{name: "squall_execute_latency_seconds", help: "Bolts: time Execute took per tuple, measured per batch of tuples (each tuple counts as its batch's mean). Buckets as for squall_batch_latency_seconds.",
			kind: kindHistogram, field: "execute_latency", value: executeLatency},
		{name: "squall_component_busy_seconds_total", help: "Bolts: time the component's executors spent executing tuples; rate() over the executors is the capacity.",
			kind: kindCounter, field: "busy_seconds",
			value: func(c c) (any, bool) { return c.stats.Busy.Seconds(), c.stats.ExecuteLatency.Count > 0 }},
		{name: "squall_component_capacity", help: "Bolts: the share of the last 10 minutes (less while younger) its executors spent executing, busy time / (window x executors), as Storm's capacity; near 1 the component is the bottleneck.",
			kind: kindGauge,
			value: func(c c) (any, bool) {
				if c.stats.ExecuteLatency.Count == 0 {
					return nil, false
				}
				return capacity(c.top.capacityWindow(), c.name, c.stats.Executors)
			}},
	}
}

// taskFigures are the figures of one task; their REST fields are in
// TaskView.
func taskFigures() []figure[topology.TaskStats] {
	type t = topology.TaskStats
	return []figure[t]{
		{name: "squall_task_tuples_emitted_total", help: "Emit calls of one task.",
			kind: kindCounter, field: "emitted", value: func(t t) (any, bool) { return t.Emitted, true }},
		{name: "squall_task_tuples_transferred_total", help: "Tuples one task sent to target tasks.",
			kind: kindCounter, field: "transferred", value: func(t t) (any, bool) { return t.Transferred, true }},
		{name: "squall_task_tuples_executed_total", help: "Tuples one bolt task executed.",
			kind: kindCounter, field: "executed", value: func(t t) (any, bool) { return t.Executed, true }},
		{name: "squall_task_tuples_acked_total", help: "One task's acks: spouts: tuple trees completed; bolts: tuples acked.",
			kind: kindCounter, field: "acked", value: func(t t) (any, bool) { return t.Acked, true }},
		{name: "squall_task_tuples_failed_total", help: "One task's failures: spouts: tuple trees failed, timeouts included; bolts: tuples failed.",
			kind: kindCounter, field: "failed", value: func(t t) (any, bool) { return t.Failed, true }},
	}
}

// stateFigures are the figures of one persistent state of a Trident
// topology; their REST fields are in StateView.
func stateFigures() []figure[trident.StateStats] {
	type s = trident.StateStats
	return []figure[s]{
		{name: "squall_state_reads_total", help: "Keys that batches' commits read from the persistent map state.",
			kind: kindCounter, field: "reads", value: func(s s) (any, bool) { return s.Reads, true }},
		{name: "squall_state_writes_total", help: "Keys that batches' commits wrote to the persistent map state.",
			kind: kindCounter, field: "writes", value: func(s s) (any, bool) { return s.Writes, true }},
		{name: "squall_state_errors_total", help: "Batches' commits on the persistent state that failed, fenced writes included.",
			kind: kindCounter, field: "errors", value: func(s s) (any, bool) { return s.Errors, true }},
	}
}

// batches adapts a read of a Trident topology's batch figures; the
// figure does not apply to a tuple-level topology.
func batches(f func(Batches) any) func(*reading) (any, bool) {
	return func(r *reading) (any, bool) {
		if r.batches == nil {
			return nil, false
		}
		return f(r.batches), true
	}
}

// latencyIf is l when it counts something.
func latencyIf(l topology.Latency) (any, bool) { return l, l.Count > 0 }

func batchLatency(r *reading) (any, bool) {
	if r.batches == nil {
		return nil, false
	}
	return latencyIf(r.batches.BatchLatency())
}

func commitLatency(r *reading) (any, bool) {
	if r.batches == nil {
		return nil, false
	}
	return latencyIf(r.batches.CommitLatency())
}

func completeLatency(c componentReading) (any, bool) { return latencyIf(c.stats.CompleteLatency) }
func executeLatency(c componentReading) (any, bool)  { return latencyIf(c.stats.ExecuteLatency) }

// deadLettersCell is the UI cell of the dead letters: the operations'
// rejects and the sources' dead letters (the REST field batches.dead_letters
// holds the former, sources.dead_lettered the latter), as their sum and,
// when the topology has sources' counters, the sources' share.
func deadLettersCell(r *reading) (any, bool) {
	var ops uint64
	if r.batches != nil {
		ops = r.batches.Rejected()
	}
	if r.e.opts.Sources == nil {
		return ops, r.batches != nil
	}
	src := r.e.opts.Sources.SourceCounters().DeadLettered
	return fmt.Sprintf("%d (%d from sources)", ops+src, src), true
}
