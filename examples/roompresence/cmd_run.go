package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/squallstream/squall/drpc"

	"github.com/squallstream/squall/internal/logfile"
	"github.com/squallstream/squall/monitor"
)

// monitorTokenVar holds the bearer token of the monitor's actions, needed
// when --http is not a loopback address (an environment variable, so the
// token does not show in process listings).
const monitorTokenVar = "SQUALL_MONITOR_TOKEN"

// faultFlags inject faults into the run command (used by chaos).
type faultFlags struct {
	retry, panic float64
	limit        int
	seed         uint64
}

func (f *faultFlags) register(fs *flag.FlagSet) {
	fs.Float64Var(&f.retry, "fault-retry", 0, "probability of an injected retryable failure, per tuple reaching the timeline step and per presence batch")
	fs.Float64Var(&f.panic, "fault-panic", 0, "probability of an injected worker panic, per tuple reaching the timeline step and per presence batch")
	fs.IntVar(&f.limit, "fault-limit", 0, "most faults to inject (0: no limit)")
	fs.Uint64Var(&f.seed, "fault-seed", 1, "seed of the fault injector")
}

func (f *faultFlags) injector() Injector {
	if f.retry <= 0 && f.panic <= 0 {
		return nil
	}
	limit := f.limit
	if limit == 0 {
		limit = int(^uint(0) >> 1)
	}
	inj := newRandomFaults(f.seed, f.retry, f.panic, limit)
	inj.onFault = func(kind, where string) { fmt.Fprintf(os.Stderr, "run: injected %s in %s\n", kind, where) }
	return inj
}

// logFlags write the run's log as JSON lines to a rotated file, which the
// monitor's log viewer reads.
type logFlags struct {
	path     string
	maxBytes int64
	files    int
}

func (f *logFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.path, "log-file", "", "write the log (runtime, monitor actions, progress) as JSON lines to this file, rotated by size; the monitor's log viewer reads it (empty: none)")
	fs.Int64Var(&f.maxBytes, "log-max-bytes", logfile.DefaultMaxBytes, "size past which --log-file is rotated")
	fs.IntVar(&f.files, "log-files", logfile.DefaultMaxFiles, "how many files of --log-file to keep, the one written included")
}

func (f *logFlags) open() (*logfile.Writer, error) {
	if f.maxBytes <= 0 || f.files <= 0 {
		return nil, fmt.Errorf("--log-max-bytes and --log-files must be positive")
	}
	return logfile.Open(logfile.Config{Path: f.path, MaxBytes: f.maxBytes, MaxFiles: f.files})
}

func cmdRun(ctx context.Context, args []string) error {
	var o options
	var ff faultFlags
	var tasks, presenceBatch int
	var until, verbose, bug bool
	var httpAddr, drpcAddr string
	var lf logFlags
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	lf.register(fs)
	o.register(fs)
	ff.register(fs)
	fs.IntVar(&tasks, "tasks", 2, "parallelism of the spout, presence and timeline steps")
	fs.IntVar(&presenceBatch, "presence-batch", defaultPresenceBatch, "presence rows per Cassandra request: UPDATEs per unlogged batch and visits per SELECT ... IN (1: one statement each)")
	fs.BoolVar(&until, "until-caught-up", false, "stop once every record in the topic is committed")
	fs.BoolVar(&verbose, "v", false, "log the runtime's warnings")
	fs.BoolVar(&bug, "inject-bug", false, "count every ENTER twice: a bug that corrupts the results, which rebuild repairs")
	fs.StringVar(&httpAddr, "http", monitor.DefaultAddr, "address of the web UI, REST API and /metrics (port 0: any free port; empty: none); off loopback the actions need $"+monitorTokenVar)
	fs.StringVar(&drpcAddr, "drpc", "127.0.0.1:0", "address of the DRPC server (POST /drpc/"+drpcTimeline+"; port 0: any free port; empty: none)")
	if err := o.parse(fs, args, true); err != nil {
		return err
	}
	if presenceBatch < 1 || presenceBatch > maxPresenceBatch {
		// Larger unlogged batches pass Cassandra's batch size warning
		// (5 KiB by default) and, far beyond, its failure threshold.
		return fmt.Errorf("--presence-batch %d: want 1 to %d", presenceBatch, maxPresenceBatch)
	}
	st, err := o.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	if cs, ok := st.(*cassandraStore); ok {
		cs.batch = presenceBatch
	}
	kio, err := newKafkaIO(o.brokers(), o.sec.kafka())
	if err != nil {
		return err
	}
	defer kio.Close()
	if err := kio.ensureTopics(ctx, o.partitions, o.topic, o.dlq); err != nil {
		return err
	}
	var handlers []slog.Handler
	if verbose {
		handlers = append(handlers, slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	if lf.path != "" {
		w, err := lf.open()
		if err != nil {
			return err
		}
		defer w.Close()
		handlers = append(handlers, slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo, ReplaceAttr: logfile.ReadableDurations}))
		fmt.Fprintf(os.Stderr, "run: logging JSON to %s\n", w.Path())
	}
	var log *slog.Logger
	if len(handlers) > 0 {
		log = slog.New(slog.NewMultiHandler(handlers...))
	}
	var mon *monitor.Registry
	if httpAddr != "" {
		mon = monitor.NewRegistry()
		srv, err := monitor.Start(mon, monitor.Config{Addr: httpAddr, Token: os.Getenv(monitorTokenVar), Logger: log,
			LogFile: lf.path, LogFiles: lf.files})
		if err != nil {
			return err
		}
		defer func() {
			cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Close(cctx)
		}()
		fmt.Fprintf(os.Stderr, "run: monitor (web UI, /api/v1, /metrics) on %s\n", srv.URL())
	}
	var queries *drpc.Server
	if drpcAddr != "" {
		queries = drpc.NewServer(drpc.Config{})
		stop, url, err := serveDRPC(queries, drpcAddr)
		if err != nil {
			return err
		}
		defer stop()
		fmt.Fprintf(os.Stderr, "run: DRPC on %s (try: roompresence query --drpc %s --room room-03)\n", url, url)
	}
	fmt.Fprintf(os.Stderr, "run: reading %s from %v into %s\n", o.topic, o.brokers(), o.describeStore())
	stats, err := runTopology(ctx, runConfig{brokers: o.brokers(), kafkaSec: o.sec.kafka(), store: st, topic: o.topic, dlq: o.dlq, tasks: tasks,
		untilCaughtUp: until, faults: ff.injector(), progress: os.Stderr, every: 2 * time.Second, logger: log, monitor: mon,
		drpc: queries, bug: bug})
	fmt.Fprintf(os.Stderr, "run: committed txid %d; %d records read (replays included), %d dead letters, in %v\n",
		stats.committed, stats.emitted, stats.deadLettered, stats.took.Round(time.Millisecond))
	if c, ok := st.(statementSource); ok {
		fmt.Fprintf(os.Stderr, "run: Cassandra %s\n", c.Statements().describe(stats.emitted))
	}
	return err
}
