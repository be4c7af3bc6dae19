// Command pipeline-bench measures the services under room presence
// (examples/roompresence) on their own, for bench/pipeline.sh (make
// bench-pipeline), which runs room presence end to end beside it and
// prints the pipeline's events/s against the smaller of the two limits:
//
//   - raw-kafka: a plain kafka-go Reader per partition reads the topic from
//     its first offset to the end offsets taken at the start, all
//     partitions at once; events/s is the records read per second.
//   - raw-cassandra: the records read are decoded (malformed ones
//     dropped, as the pipeline sends them to its dead-letter topic) and
//     cut into the pipeline's batches (--batch-records records of each
//     partition a batch); each batch's Cassandra statements are the ones
//     room presence issues for it, on the same tables, with the same
//     grouping (--presence-batch rows an unlogged batch or SELECT ... IN),
//     the same concurrency (--concurrency requests at once within a batch)
//     and batches one after the other: the presence UPDATEs of every visit
//     touched, the read-backs of the visits not known complete (the same
//     remembered halves, an LRU of 200,000 visits), and per room hour a
//     read the first time it is seen and an opaque write (txid, curr,
//     prev) per batch. statements_per_s is the statements sent per second
//     of Cassandra work; events_per_s divides it by --statements-per-event
//     (the pipeline's, from its run) when given, else by this run's own.
//
// Usage:
//
//	pipeline-bench --topic T --keyspace K [--brokers B] [--hosts H] [--batch-records 2000]
//	               [--presence-batch 16] [--concurrency 64] [--statements-per-event X]
//
// Brokers and hosts default to $SQUALL_KAFKA_BROKERS and
// $SQUALL_CASSANDRA_HOSTS (comma-separated). The keyspace is created and
// must be a fresh one (the presence rows of an earlier run would change
// nothing but the timing). It prints two lines:
//
//	RESULT impl=raw-kafka records=N events_per_s=X
//	RESULT impl=raw-cassandra events=N statements=S statements_per_event=R statements_per_s=X events_per_s=Y
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
)

// options are the command-line options.
type options struct {
	brokers, hosts     []string
	topic, keyspace    string
	batchRecords       int     // records of each partition per batch (run's --batch-records default)
	presenceBatch      int     // presence rows per request (run's --presence-batch)
	concurrency        int     // requests at once within a batch (the presence store's limit)
	statementsPerEvent float64 // the pipeline's; 0: this run's
}

func parse(args []string, stderr io.Writer) (options, error) {
	var o options
	var brokers, hosts string
	fs := flag.NewFlagSet("pipeline-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&brokers, "brokers", os.Getenv("SQUALL_KAFKA_BROKERS"), "Kafka brokers, comma-separated")
	fs.StringVar(&hosts, "hosts", os.Getenv("SQUALL_CASSANDRA_HOSTS"), "Cassandra hosts, comma-separated")
	fs.StringVar(&o.topic, "topic", "", "the events topic (required)")
	fs.StringVar(&o.keyspace, "keyspace", "", "a fresh keyspace for the raw writes (required)")
	fs.IntVar(&o.batchRecords, "batch-records", 2000, "records of each partition per batch")
	fs.IntVar(&o.presenceBatch, "presence-batch", 16, "presence rows per request")
	fs.IntVar(&o.concurrency, "concurrency", 64, "requests at once within a batch")
	fs.Float64Var(&o.statementsPerEvent, "statements-per-event", 0, "the pipeline's statements per event (0: this run's)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.brokers, o.hosts = split(brokers), split(hosts)
	switch {
	case fs.NArg() != 0:
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	case len(o.brokers) == 0 || len(o.hosts) == 0:
		return o, errors.New("--brokers and --hosts (or $SQUALL_KAFKA_BROKERS and $SQUALL_CASSANDRA_HOSTS) are required")
	case o.topic == "" || o.keyspace == "":
		return o, errors.New("--topic and --keyspace are required")
	case o.batchRecords < 1 || o.presenceBatch < 1 || o.concurrency < 1 || o.statementsPerEvent < 0:
		return o, errors.New("--batch-records, --presence-batch and --concurrency must be positive, --statements-per-event not negative")
	}
	return o, nil
}

func split(s string) []string {
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func main() {
	o, err := parse(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pipeline-bench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "pipeline-bench:", err)
		os.Exit(1)
	}
}

// run measures raw-kafka, then raw-cassandra on the records read.
func run(ctx context.Context, o options, out io.Writer) error {
	parts, kr, err := readTopic(ctx, o.brokers, o.topic)
	if err != nil {
		return fmt.Errorf("raw-kafka: %w", err)
	}
	fmt.Fprintf(out, "RESULT impl=raw-kafka records=%d events_per_s=%.0f\n", kr.records, float64(kr.records)/kr.took.Seconds())
	cr, err := writeRaw(ctx, o, batches(parts, o.batchRecords))
	if err != nil {
		return fmt.Errorf("raw-cassandra: %w", err)
	}
	perEvent := float64(cr.statements) / float64(cr.events)
	per := perEvent
	if o.statementsPerEvent > 0 {
		per = o.statementsPerEvent
	}
	sps := float64(cr.statements) / cr.took.Seconds()
	fmt.Fprintf(out, "RESULT impl=raw-cassandra events=%d statements=%d statements_per_event=%.3f statements_per_s=%.0f events_per_s=%.0f\n",
		cr.events, cr.statements, perEvent, sps, sps/per)
	return nil
}
