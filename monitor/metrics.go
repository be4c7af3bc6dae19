package monitor

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/transport"
	"github.com/squallstream/squall/trident"
)

// TransportCounter reports a cluster-mode worker's transport server
// counters (false when it has none); the registry finds it by type
// assertion. *topology.Running implements it.
type TransportCounter interface {
	TransportStats() (transport.ServerStats, bool)
}

var (
	_ TransportCounter = (*topology.Running)(nil)
	_ TransportCounter = (*trident.Running)(nil)
)

// collector exports the registry's figures, read at scrape time.
type collector struct {
	reg *Registry
}

// Collector returns a prometheus.Collector that reads the registered
// topologies' figures at every scrape. Register it with a registry of
// your own (prometheus.NewRegistry); the server does so with its own.
// docs/operations.md lists the metrics.
func (g *Registry) Collector() prometheus.Collector { return collector{reg: g} }

var (
	lTopo      = []string{"topology"}
	lComp      = []string{"topology", "component"}
	lCompQuant = []string{"topology", "component", "quantile"}
	lTask      = []string{"topology", "component", "task"}
	lQuant     = []string{"topology", "quantile"}
	lPart      = []string{"topology", "partition"}
	lState     = []string{"topology", "state", "component"}
	lOrigin    = []string{"topology", "origin"}
	lReason    = []string{"topology", "reason"}

	descReady = prometheus.NewDesc("squall_topology_ready",
		"1 if the topology runs (a worker is up and it has not halted or stopped), else 0.", lTopo, nil)
	descWorkerRunning = prometheus.NewDesc("squall_worker_running",
		"1 if the topology's worker runs, else 0 (crashed and waiting for its restart, or stopped).", lTopo, nil)
	descRestarts = prometheus.NewDesc("squall_worker_restarts_total",
		"Worker crashes; the supervisor restarts the worker after each, unless the topology stops first.", lTopo, nil)
	descActive = prometheus.NewDesc("squall_topology_active",
		"1 if the topology's spouts are asked to emit (Trident: batches are started), 0 after a deactivation.", lTopo, nil)
	descInFlight = prometheus.NewDesc("squall_batches_in_flight",
		"Trident: batches announced and not yet committed or failed, as of the coordinator's last action.", lTopo, nil)
	descPending = prometheus.NewDesc("squall_pending_trees",
		"Tuple trees the runtime waits on (for Trident: batch announcements and commits in flight).", lTopo, nil)

	descEmitted = prometheus.NewDesc("squall_tuples_emitted_total",
		"Emit calls of the component's tasks.", lComp, nil)
	descTransferred = prometheus.NewDesc("squall_tuples_transferred_total",
		"Tuples the component's tasks sent to target tasks (an emit to three tasks counts three).", lComp, nil)
	descExecuteLatency = prometheus.NewDesc("squall_execute_latency_quantile_seconds",
		"Bolts: time Execute took per tuple, by quantile (0.5, 0.99; 1 is the maximum); measured per batch of tuples, each tuple counting as its batch's mean. Quantiles are accurate to about 7%.", lCompQuant, nil)
	descBusy = prometheus.NewDesc("squall_component_busy_seconds_total",
		"Bolts: time the component's executors spent executing tuples; rate() over the executors is the capacity.", lComp, nil)
	descExecutors = prometheus.NewDesc("squall_component_executors",
		"Executors of the component that this process runs.", lComp, nil)
	descCapacity = prometheus.NewDesc("squall_component_capacity",
		"Bolts: the share of the last 10 minutes (less while younger) its executors spent executing, busy time / (window x executors), as Storm's capacity; near 1 the component is the bottleneck.", lComp, nil)
	descExecuted = prometheus.NewDesc("squall_tuples_executed_total",
		"Tuples the component's bolt tasks executed.", lComp, nil)
	descAcked = prometheus.NewDesc("squall_tuples_acked_total",
		"Spouts: tuple trees completed; bolts: tuples acked.", lComp, nil)
	descFailed = prometheus.NewDesc("squall_tuples_failed_total",
		"Spouts: tuple trees failed, timeouts included; bolts: tuples failed.", lComp, nil)
	descTimedOut = prometheus.NewDesc("squall_tuples_timed_out_total",
		"Spouts: tuple trees that timed out.", lComp, nil)
	descCompErrors = prometheus.NewDesc("squall_component_errors_total",
		"Errors the component's tasks reported.", lComp, nil)
	descComplete = prometheus.NewDesc("squall_complete_latency_quantile_seconds",
		"Spouts: time from emit to ack of the trees completed since submission, by quantile (0.5, 0.99; 1 is the maximum). Quantiles are accurate to about 7%.", lCompQuant, nil)

	descTaskEmitted = prometheus.NewDesc("squall_task_tuples_emitted_total",
		"Emit calls of one task.", lTask, nil)
	descTaskTransferred = prometheus.NewDesc("squall_task_tuples_transferred_total",
		"Tuples one task sent to target tasks.", lTask, nil)
	descTaskExecuted = prometheus.NewDesc("squall_task_tuples_executed_total",
		"Tuples one bolt task executed.", lTask, nil)
	descTaskAcked = prometheus.NewDesc("squall_task_tuples_acked_total",
		"One task's acks: spouts: tuple trees completed; bolts: tuples acked.", lTask, nil)
	descTaskFailed = prometheus.NewDesc("squall_task_tuples_failed_total",
		"One task's failures: spouts: tuple trees failed, timeouts included; bolts: tuples failed.", lTask, nil)

	descCommittedTxID = prometheus.NewDesc("squall_committed_txid",
		"The last committed transaction id.", lTopo, nil)
	descCommitted = prometheus.NewDesc("squall_batches_committed_total",
		"Batches committed since the topology was submitted in this process.", lTopo, nil)
	descAnnounced = prometheus.NewDesc("squall_batches_emitted_total",
		"Batch attempts announced since the topology was submitted in this process.", lTopo, nil)
	descReplayed = prometheus.NewDesc("squall_batches_replayed_total",
		"Announced batch attempts at a txid that was tried before.", lTopo, nil)
	descCommitLatency = prometheus.NewDesc("squall_commit_latency_quantile_seconds",
		"Time from the start of a batch's commit phase to the end of its state writes, over the batches committed since submission, by quantile (0.5, 0.99; 1 is the maximum). Quantiles are accurate to about 7%.", lQuant, nil)
	descBatchFailed = prometheus.NewDesc("squall_batches_failed_total",
		"Failed batch attempts and failed master actions (store or spout calls).", lTopo, nil)
	descBatchLatency = prometheus.NewDesc("squall_batch_latency_quantile_seconds",
		"Time from a batch's announcement to the end of its commit, over the batches committed since submission, by quantile (0.5, 0.99; 1 is the maximum). Quantiles are accurate to about 7%.", lQuant, nil)
	descDeadLetters = prometheus.NewDesc("squall_dead_letters_total",
		"Dead letters, replays included: origin \"operations\" for tuples Trident operations rejected to Config.DeadLetters, \"source\" for records the sources rejected to their own (the Kafka spout's dead-letter topic).", lOrigin, nil)
	descQuarantined = prometheus.NewDesc("squall_quarantined_total",
		"Corrupt stored values moved to the quarantine, replays included.", lTopo, nil)
	descGeneration = prometheus.NewDesc("squall_owner_generation",
		"The owner generation this process holds for the topology.", lTopo, nil)
	descHalted = prometheus.NewDesc("squall_topology_halted",
		"1 if the topology halted for good (attempt limit reached, or superseded), else 0.", lTopo, nil)

	descFencing = prometheus.NewDesc("squall_fencing_rejections_total",
		"Writes of this submission rejected because a newer owner generation of the topology had written (state opens and commits, coordinator store writes); the first halts the topology.", lTopo, nil)
	descStateReads = prometheus.NewDesc("squall_state_reads_total",
		"Keys that batches' commits read from the persistent map state.", lState, nil)
	descStateWrites = prometheus.NewDesc("squall_state_writes_total",
		"Keys that batches' commits wrote to the persistent map state.", lState, nil)
	descStateErrors = prometheus.NewDesc("squall_state_errors_total",
		"Batches' commits on the persistent state that failed, fenced writes included.", lState, nil)

	descBatchHist = prometheus.NewDesc("squall_batch_latency_seconds",
		"Trident: time from a batch's announcement to the end of its commit, over the batches committed since submission. Buckets at powers of two of nanoseconds (8.192e-06 to 68.72 s); each counts the latencies below its bound.", lTopo, nil)
	descCommitHist = prometheus.NewDesc("squall_commit_latency_seconds",
		"Trident: time from the start of a batch's commit phase to the end of its state writes. Buckets as for squall_batch_latency_seconds.", lTopo, nil)
	descCompleteHist = prometheus.NewDesc("squall_complete_latency_seconds",
		"Spouts: time from emit to ack of the trees completed since submission. Buckets as for squall_batch_latency_seconds.", lComp, nil)
	descExecuteHist = prometheus.NewDesc("squall_execute_latency_seconds",
		"Bolts: time Execute took per tuple, measured per batch of tuples (each tuple counts as its batch's mean). Buckets as for squall_batch_latency_seconds.", lComp, nil)

	descTransportRefused = prometheus.NewDesc("squall_transport_refused_total",
		"Connections the worker's transport server refused or closed, by reason: conn_cap, tls, peer (VerifyPeer), handshake, handshake_timeout, idle, frame_size, budget (a frame over its decoding budget), decode, panic (a value decoder panicked).", lReason, nil)

	descLag = prometheus.NewDesc("squall_kafka_consumer_lag",
		"Records between the source partition's last batch and the end of its log, as of that batch.", lPart, nil)
)

// Describe sends every descriptor: the set is fixed.
func (collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		descReady, descWorkerRunning, descRestarts, descPending, descActive, descInFlight,
		descEmitted, descExecuted, descAcked, descFailed, descTimedOut, descCompErrors, descComplete,
		descTransferred, descExecuteLatency, descBusy, descExecutors, descCapacity,
		descTaskEmitted, descTaskTransferred, descTaskExecuted, descTaskAcked, descTaskFailed,
		descCommittedTxID, descCommitted, descAnnounced, descReplayed, descBatchFailed, descBatchLatency,
		descCommitLatency, descDeadLetters,
		descQuarantined, descGeneration, descHalted, descLag,
		descFencing, descStateReads, descStateWrites, descStateErrors,
		descBatchHist, descCommitHist, descCompleteHist, descExecuteHist,
		descTransportRefused,
	} {
		ch <- d
	}
}

// Collect reads every registered topology's figures.
func (c collector) Collect(ch chan<- prometheus.Metric) {
	for _, e := range c.reg.all() {
		collectEntry(ch, e)
	}
}

func collectEntry(ch chan<- prometheus.Metric, e *entry) {
	name := e.t.Name()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	h := e.t.Health()
	gauge(descReady, bool01(e.status() == StatusRunning), name)
	gauge(descWorkerRunning, bool01(h.Running), name)
	counter(descRestarts, uint64(h.Crashes), name)
	gauge(descPending, float64(e.t.Pending()), name)
	if a, ok := e.t.(Activity); ok {
		gauge(descActive, bool01(a.Active()), name)
	}
	if f, ok := e.t.(InFlighter); ok && e.batches != nil {
		gauge(descInFlight, float64(f.InFlight()), name)
	}

	stats := e.t.Stats()
	var capacityWindow *window // the 10 minutes' growth, read once a bolt needs it
	for comp, s := range stats.Components {
		counter(descEmitted, s.Emitted, name, comp)
		counter(descTransferred, s.Transferred, name, comp)
		gauge(descExecutors, float64(s.Executors), name, comp)
		if s.ExecuteLatency.Count > 0 {
			quantiles(s.ExecuteLatency, func(q string, v float64) { gauge(descExecuteLatency, v, name, comp, q) })
			ch <- histogram(descExecuteHist, s.ExecuteLatency, name, comp)
			ch <- prometheus.MustNewConstMetric(descBusy, prometheus.CounterValue, s.Busy.Seconds(), name, comp)
			if capacityWindow == nil {
				w := e.windowsAt(e.clock.Now(), totalsOf(stats, e.batches))[0] // 10m
				capacityWindow = &w
			}
			if c, ok := capacity(capacityWindow, comp, s.Executors); ok {
				gauge(descCapacity, c, name, comp)
			}
		}
		counter(descExecuted, s.Executed, name, comp)
		counter(descAcked, s.Acked, name, comp)
		counter(descFailed, s.Failed, name, comp)
		counter(descTimedOut, s.TimedOut, name, comp)
		counter(descCompErrors, s.Errors, name, comp)
		if s.CompleteLatency.Count > 0 {
			quantiles(s.CompleteLatency, func(q string, v float64) { gauge(descComplete, v, name, comp, q) })
			ch <- histogram(descCompleteHist, s.CompleteLatency, name, comp)
		}
		for _, t := range s.Tasks {
			task := strconv.Itoa(int(t.Task))
			counter(descTaskEmitted, t.Emitted, name, comp, task)
			counter(descTaskTransferred, t.Transferred, name, comp, task)
			counter(descTaskExecuted, t.Executed, name, comp, task)
			counter(descTaskAcked, t.Acked, name, comp, task)
			counter(descTaskFailed, t.Failed, name, comp, task)
		}
	}

	if b := e.batches; b != nil {
		lat := b.BatchLatency()
		gauge(descCommittedTxID, float64(b.Committed()), name)
		counter(descCommitted, lat.Count, name)
		counter(descBatchFailed, b.FailedAttempts(), name)
		counter(descAnnounced, b.Announced(), name)
		counter(descReplayed, b.Replayed(), name)
		if lat.Count > 0 {
			quantiles(lat, func(q string, v float64) { gauge(descBatchLatency, v, name, q) })
			ch <- histogram(descBatchHist, lat, name)
		}
		if cl := b.CommitLatency(); cl.Count > 0 {
			quantiles(cl, func(q string, v float64) { gauge(descCommitLatency, v, name, q) })
			ch <- histogram(descCommitHist, cl, name)
		}
		counter(descDeadLetters, b.Rejected(), name, "operations")
		counter(descQuarantined, b.Quarantined(), name)
		gauge(descGeneration, float64(b.Generation()), name)
		gauge(descHalted, bool01(closed(b.Halted())), name)
	}

	if c, ok := e.t.(StateCounter); ok {
		counter(descFencing, c.FencingRejections(), name)
		for _, s := range c.States() {
			counter(descStateReads, s.Reads, name, s.Name, s.Component)
			counter(descStateWrites, s.Writes, name, s.Name, s.Component)
			counter(descStateErrors, s.Errors, name, s.Name, s.Component)
		}
	}

	if c, ok := e.t.(TransportCounter); ok {
		if st, ok := c.TransportStats(); ok {
			refused := st.RefusedByReason()
			for _, reason := range transport.Reasons() {
				counter(descTransportRefused, refused[reason], name, reason)
			}
		}
	}

	if e.opts.Sources != nil {
		counter(descDeadLetters, e.opts.Sources.SourceCounters().DeadLettered, name, "source")
	}

	if e.opts.Lag != nil {
		seen := make(map[string]bool)
		for _, p := range e.opts.Lag.Lag() {
			if seen[p.Partition] { // one series per partition
				continue
			}
			seen[p.Partition] = true
			gauge(descLag, float64(p.Lag), name, p.Partition)
		}
	}
}

// capacity returns the share of window w that comp's executors spent
// executing; false if w covers no time.
func capacity(w *window, comp string, executors int) (float64, bool) {
	if w.Span <= 0 || executors <= 0 {
		return 0, false
	}
	return w.Growth.Components[comp].Busy.Seconds() / (w.Span.Seconds() * float64(executors)), true
}

// histogram returns l as a Prometheus histogram: its buckets count the
// latencies below their bounds, cumulative by construction. The count is
// at least the last bucket's, since the figures are read while latencies
// are recorded.
func histogram(d *prometheus.Desc, l topology.Latency, labels ...string) prometheus.Metric {
	buckets := make(map[float64]uint64, len(l.Buckets))
	count := l.Count
	for _, b := range l.Buckets {
		buckets[b.Below.Seconds()] = b.Count
		count = max(count, b.Count)
	}
	return prometheus.MustNewConstHistogram(d, count, l.Sum.Seconds(), buckets, labels...)
}

// quantiles reports l's quantiles, the maximum as quantile 1.
func quantiles(l topology.Latency, f func(q string, seconds float64)) {
	f("0.5", l.P50.Seconds())
	f("0.99", l.P99.Seconds())
	f("1", l.Max.Seconds())
}

func bool01(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
