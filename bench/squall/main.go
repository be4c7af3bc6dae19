// Command squall-bench is the squall side of the side-by-side benchmark
// against Apache Storm (bench/compare.sh runs both). It runs one workload,
// measures it over a fixed window after a warm-up, and prints one line:
//
//	RESULT impl=squall workload=NAME key=value ...
//
// with the same keys as the Storm side (bench/storm). Usage:
//
//	go run ./bench/squall WORKLOAD [--window 30s] [--warmup 10s] [--batch 256]
//	                               [--pending 1024] [--trees 1000000] [--sentences 10000]
//	                               [--parallelism 1] [--cpuprofile FILE] [--memprofile FILE]
//
// Workloads:
//
//   - core-noack: constant spout -> id bolt -> null bolt, tracking off;
//     tuples_per_s counted at the null bolt.
//   - core-acked: the same with message ids and one acker, max spout pending
//     --pending; tuples_per_s is trees acked at the spout per second, p50_us
//     and p99_us the complete latency measured by the spout (emit to Ack).
//   - trident-wordcount: cycling batch spout of --sentences sentences per
//     batch -> split -> groupBy(word) -> persistentAggregate(count) on opaque
//     memory state; words_per_s counts the words of committed batches.
//   - trident-wordcount-preagg: the same counts with each batch's words
//     counted per partition by hand before the groupBy (what Storm's planner
//     does by itself for a combiner); an experiment, not a Storm workload.
//   - acker-memory: the spout emits --trees tuples with message ids to a bolt
//     that never acks them, timeouts off; bytes_per_tree is the growth of the
//     live heap divided by --trees.
//   - cluster-acked: core-acked's topology as two workers in two processes
//     over loopback TCP (topology.RunWorker): the spout and the id bolt in
//     this process, the sink and the acker in a second process running this
//     binary (argument cluster-worker), the placement Storm's scheduler
//     picks for the same topology with two workers.
//   - floor-wordcount: trident-wordcount's work with no framework, the
//     floor it is measured against: --parallelism goroutines, each
//     splitting batches of --sentences of the same sentences with
//     strings.SplitSeq, counting each batch in a map and merging it into
//     its total map (merged into one and checked at the end); no tuples,
//     no state, no fault tolerance. words_per_s over the same warm-up and
//     window; batches counts every goroutine's batches.
//
// Parallelism is 1 for every component unless --parallelism sets it (only
// for core-noack, core-acked and the word counts, floor-wordcount's
// goroutines included): then the spout and both
// bolts of the core workloads, and the Trident source (with the split and
// the partial counts that run in its tasks) and the grouped aggregation,
// have that many executors, one task each; the acker stays one.
// Everything but cluster-acked runs in one worker. Every RESULT line
// carries parallelism=N.
// The program uses only squall's public API.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"
)

// options are the command-line options; the defaults match bench/storm's.
type options struct {
	workload    string
	window      time.Duration
	warmup      time.Duration
	batch       int // tuples an executor buffers per send (topology.Config.BatchSize)
	pending     int // max spout pending for core-acked
	trees       int // pending trees for acker-memory
	sentences   int // sentences per Trident batch and source task
	parallelism int // executors per component, the acker and Trident's coordinator excepted
	cpuprofile  string
	memprofile  string
}

var workloads = map[string]func(context.Context, options) (string, error){
	"core-noack":               runCoreNoAck,
	"core-acked":               runCoreAcked,
	"trident-wordcount":        runWordCount,
	"trident-wordcount-preagg": runWordCountPreAgg,
	"acker-memory":             runAckerMemory,
	"cluster-acked":            runClusterAcked,
	"floor-wordcount":          runFloorWordCount,
}

// newFlagSet returns the flags of o, with their defaults.
func newFlagSet(o *options) *flag.FlagSet {
	fs := flag.NewFlagSet("squall-bench", flag.ContinueOnError)
	fs.DurationVar(&o.window, "window", 30*time.Second, "measuring window")
	fs.DurationVar(&o.warmup, "warmup", 10*time.Second, "warm-up before the window")
	fs.IntVar(&o.batch, "batch", 256, "tuples an executor buffers per send")
	fs.IntVar(&o.pending, "pending", 1024, "max spout pending (core-acked)")
	fs.IntVar(&o.trees, "trees", 1_000_000, "pending trees (acker-memory)")
	fs.IntVar(&o.sentences, "sentences", 10_000, "sentences per batch and source task (trident-wordcount)")
	fs.IntVar(&o.parallelism, "parallelism", 1, "executors per component, acker excepted (core-noack, core-acked, trident-wordcount)")
	fs.StringVar(&o.cpuprofile, "cpuprofile", "", "write a CPU profile of the whole run to this file")
	fs.StringVar(&o.memprofile, "memprofile", "", "write an allocation profile at the end of the run to this file")
	return fs
}

func parse(args []string, stderr io.Writer) (options, error) {
	o := options{}
	fs := newFlagSet(&o)
	fs.SetOutput(stderr)
	usage := "usage: squall-bench core-noack|core-acked|trident-wordcount|trident-wordcount-preagg|acker-memory|cluster-acked|floor-wordcount [flags]"
	// The workload may come before or after the flags.
	var rest []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return o, err
		}
		args = fs.Args()
		if len(args) > 0 {
			rest = append(rest, args[0])
			args = args[1:]
		}
	}
	if len(rest) != 1 {
		return o, errors.New(usage)
	}
	o.workload = rest[0]
	if _, ok := workloads[o.workload]; !ok {
		return o, fmt.Errorf("unknown workload %q; %s", o.workload, usage)
	}
	if o.window <= 0 || o.warmup < 0 || o.batch < 1 || o.pending < 1 || o.trees < 1 || o.sentences < 1 {
		return o, errors.New("--window, --batch, --pending, --trees and --sentences must be positive, --warmup not negative")
	}
	if o.parallelism < 1 {
		return o, errors.New("--parallelism must be positive")
	}
	if o.parallelism != 1 && (o.workload == "acker-memory" || o.workload == "cluster-acked") {
		return o, fmt.Errorf("%s runs with parallelism 1 only", o.workload)
	}
	return o, nil
}

// run runs the workload of o and returns its RESULT line.
func run(ctx context.Context, o options) (string, error) {
	figures, err := workloads[o.workload](ctx, o)
	if err != nil {
		return "", fmt.Errorf("%s: %w", o.workload, err)
	}
	return fmt.Sprintf("RESULT impl=squall workload=%s %s batch=%d parallelism=%d", o.workload, figures, o.batch, o.parallelism), nil
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == clusterWorkerArg {
		if err := clusterWorker(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "squall-bench: cluster worker:", err)
			os.Exit(1)
		}
		return
	}
	o, err := parse(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "squall-bench:", err)
		os.Exit(2)
	}
	stop, err := profile(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "squall-bench:", err)
		os.Exit(1)
	}
	line, err := run(context.Background(), o)
	if perr := stop(); perr != nil {
		fmt.Fprintln(os.Stderr, "squall-bench:", perr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "squall-bench:", err)
		os.Exit(1)
	}
	fmt.Println(line)
}

// profile starts the profiles o asks for and returns what ends them.
func profile(o options) (stop func() error, err error) {
	stop = func() error { return nil }
	if o.cpuprofile != "" {
		f, err := os.Create(o.cpuprofile)
		if err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, err
		}
		stop = func() error {
			pprof.StopCPUProfile()
			return f.Close()
		}
	}
	if o.memprofile != "" {
		runtime.MemProfileRate = 64 << 10
		stopCPU := stop
		stop = func() error {
			f, err := os.Create(o.memprofile)
			if err != nil {
				return errors.Join(stopCPU(), err)
			}
			err = pprof.Lookup("allocs").WriteTo(f, 0)
			return errors.Join(stopCPU(), err, f.Close())
		}
	}
	return stop, nil
}

// seconds formats d as seconds without trailing zeros.
func seconds(d time.Duration) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", d.Seconds()), "0"), ".")
}
