package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"time"

	"github.com/squallstream/squall/drpc"
	"github.com/squallstream/squall/state/cassandra"
	"github.com/squallstream/squall/txn"

	"github.com/squallstream/squall/examples/roompresence/room"
	"github.com/squallstream/squall/monitor"
	"github.com/squallstream/squall/spouts/kafka"
	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident"
)

// runConfig says how to run the topology.
type runConfig struct {
	brokers       []string
	kafkaSec      kafkaSec // SASL and TLS of the brokers
	store         Store
	topic, dlq    string
	tasks         int           // parallelism of the spout, presence and timeline steps
	batchRecords  int           // most records of a partition in one batch; 0: 2000
	untilCaughtUp bool          // stop once every record written before is committed
	faults        Injector      // nil: none
	progress      io.Writer     // progress lines; nil: none
	every         time.Duration // between progress lines
	logger        *slog.Logger
	monitor       *monitor.Registry // shows the running topology; nil: none
	drpc          *drpc.Server      // serves the DRPC function drpcTimeline; nil: none
	bug           bool              // inject the bug that counts every ENTER twice
}

// version is the version of the results the topology writes: the
// store's (1 without one).
func (rc runConfig) version() int {
	if rc.store == nil {
		return 1
	}
	return rc.store.Version()
}

// spoutConfig is the configuration of the example's Kafka spout.
func (rc runConfig) spoutConfig(log *slog.Logger) kafka.Config {
	perPartition := rc.batchRecords
	if perPartition <= 0 {
		perPartition = 2000
	}
	return kafka.Config{Brokers: rc.brokers, Topics: []string{rc.topic}, Topology: cassandra.VersionedName(topologyName, rc.version()),
		Decoder: decoder, DeadLetterTopic: rc.dlq, MaxRecordsPerPartition: perPartition, Logger: log,
		SASL: rc.kafkaSec.sasl, TLS: rc.kafkaSec.tls}
}

// runStats is what a run did.
type runStats struct {
	committed    txn.TxID
	emitted      uint64 // records read, replays included
	deadLettered uint64
	took         time.Duration
}

// decoder turns a record into (visit, event); a malformed record goes to
// the dead-letter topic.
var decoder = kafka.DecoderFunc(trident.Fields{fieldVisit, fieldEvent}, func(r kafka.Record) ([]any, error) {
	e, err := room.Decode(r.Value)
	if err != nil {
		return nil, err
	}
	return []any{e.Visit, e}, nil
})

// runTopology runs the room-presence topology until ctx ends or, with
// untilCaughtUp, until it has committed every record the topic held when
// it caught up.
func runTopology(ctx context.Context, rc runConfig) (runStats, error) {
	start := time.Now()
	log := rc.logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	tt, sp, err := newTopology(ctx, rc, rc.store.Timelines(), log)
	if err != nil {
		return runStats{}, err
	}
	defer sp.Close()

	baseline, _, err := rc.store.Coordination().LoadCoordinator(ctx, "roompresence")
	if err != nil {
		return runStats{}, fmt.Errorf("reading the coordinator's state: %w", err)
	}
	cluster := topology.NewLocalCluster()
	cfg := trident.Config{}
	cfg.Store = rc.store.Coordination()
	cfg.MaxBatchesInFlight = 2
	cfg.Topology.Logger = log
	cfg.Topology.RestartMinBackoff = 50 * time.Millisecond
	cfg.Cluster = cluster
	r, err := tt.Submit(ctx, cfg)
	if err != nil {
		return runStats{}, err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = cluster.Shutdown(sctx)
	}()
	if rc.monitor != nil {
		if err := rc.monitor.Add(r, monitor.Options{Lag: spoutLag(sp), Sources: spoutCounters(sp)}); err != nil {
			return runStats{}, err
		}
		defer rc.monitor.Remove(r.Name())
	}

	kio, err := newKafkaIO(rc.brokers, rc.kafkaSec)
	if err != nil {
		return runStats{}, err
	}
	defer kio.Close()
	every := rc.every
	if every <= 0 {
		every = 2 * time.Second
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var (
		lastLine, lastCheck time.Time
		lastEmitted         uint64
		caughtUpAt          txn.TxID // a txid that, once committed, covers every record seen at the end
		firstCommit         bool
		stats               runStats
	)
	for {
		select {
		case <-ctx.Done():
			return stats, nil
		case <-tick.C:
		}
		if err := r.Err(); err != nil {
			return stats, err
		}
		st := sp.Stats()
		stats = runStats{committed: r.Committed(), emitted: st.Emitted, deadLettered: st.DeadLettered, took: time.Since(start)}
		if rc.progress != nil && time.Since(lastLine) >= every {
			rate := float64(st.Emitted-lastEmitted) / max(time.Since(lastLine).Seconds(), 1e-9)
			if lastLine.IsZero() {
				rate = 0
			}
			fmt.Fprintf(rc.progress, "run: %8.0f events/s  committed txid %-6d lag %-8d dead letters %-5d crashes %d\n",
				rate, stats.committed, lag(st), st.DeadLettered, r.Health().Crashes)
			log.Info("progress", "events_per_second", int64(rate), "committed_txid", uint64(stats.committed),
				"lag", lag(st), "dead_letters", st.DeadLettered, "crashes", r.Health().Crashes)
			lastLine, lastEmitted = time.Now(), st.Emitted
		}
		if !firstCommit && stats.committed > baseline.Committed {
			firstCommit = true
			log.Info("first commit", "after", time.Since(start).Round(time.Millisecond), "committed_txid", uint64(stats.committed))
			if rc.progress != nil {
				fmt.Fprintf(rc.progress, "run: first commit %v after start (txid %d)\n", time.Since(start).Round(time.Millisecond), stats.committed)
			}
		}
		if !rc.untilCaughtUp || time.Since(lastCheck) < 500*time.Millisecond {
			continue
		}
		lastCheck = time.Now()
		done, err := readToEnd(ctx, kio, rc.topic, st)
		if err != nil {
			log.Warn("checking the end offsets", "err", err)
			continue
		}
		switch {
		case !done:
			caughtUpAt = 0
		case caughtUpAt == 0:
			// The batches that read the last records are in flight at
			// most: once a later txid commits, they have too.
			caughtUpAt = r.Committed() + txn.TxID(cfg.MaxBatchesInFlight) + 1
		case r.Committed() >= caughtUpAt:
			return stats, nil
		}
	}
}

// newTopology builds the room-presence topology over a new Kafka spout
// (the caller closes it once the topology has stopped), keeping the
// timelines in the backing maps timelines opens.
func newTopology(ctx context.Context, rc runConfig, timelines trident.BackingFactory, log *slog.Logger) (*trident.Topology, *kafka.Spout, error) {
	tasks := max(rc.tasks, 1)
	sp, err := kafka.New(ctx, rc.spoutConfig(log))
	if err != nil {
		return nil, nil, err
	}
	tt := trident.NewTopology("roompresence")
	events := tt.NewStream("room-events", sp.Opaque().Parallelism(tasks))
	pipeline{presence: rc.store, timelines: timelines, faults: rc.faults, tasks: tasks, drpc: rc.drpc, bug: rc.bug}.build(tt, events)
	return tt, sp, nil
}

// readToEnd reports whether the spout's last batches reached the end of
// every partition of topic.
func readToEnd(ctx context.Context, kio *kafkaIO, topic string, st kafka.Stats) (bool, error) {
	_, end, err := kio.bounds(ctx, topic)
	if err != nil {
		return false, err
	}
	for p, e := range end {
		ps, ok := st.Partitions[topic+"@"+strconv.Itoa(p)]
		if e > 0 && (!ok || ps.Next < e) {
			return false, nil
		}
	}
	return true, nil
}

// spoutLag reports the lag of the spout's partitions to the monitor.
func spoutLag(sp *kafka.Spout) monitor.LagSource {
	return monitor.LagFunc(func() []monitor.PartitionLag {
		ps := sp.Stats().Partitions
		out := make([]monitor.PartitionLag, 0, len(ps))
		for name, p := range ps {
			out = append(out, monitor.PartitionLag{Partition: name, Next: p.Next, LogEnd: p.LogEnd, Lag: p.Lag})
		}
		return out
	})
}

// spoutCounters reports the spout's dead letters to the monitor.
func spoutCounters(sp *kafka.Spout) monitor.SourceStats {
	return monitor.SourceStatsFunc(func() monitor.SourceCounters {
		return monitor.SourceCounters{DeadLettered: sp.Stats().DeadLettered}
	})
}

func lag(st kafka.Stats) int64 {
	var n int64
	for _, p := range st.Partitions {
		n += p.Lag
	}
	return n
}
