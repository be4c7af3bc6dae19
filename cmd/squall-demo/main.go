// Command squall-demo runs a small word-count topology on squall's
// tuple-level core, on embedded defaults (no services), and prints how many
// messages were acked, failed and replayed.
//
// Each sentence is a message with an id. A split bolt fails a fraction of
// its inputs with a retryable error; their trees fail, the source replays
// them, and the run ends when every sentence has been acked once. With
// -crash-after a bolt panics once, the worker restarts and the source
// replays what was in flight.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"time"
)

func main() {
	var opts options
	flag.IntVar(&opts.Sentences, "sentences", 200_000, "number of sentences to process")
	flag.Float64Var(&opts.FailRate, "fail-rate", 0.01, "fraction of split attempts that fail retryably (0 to 0.9)")
	flag.IntVar(&opts.CrashAfter, "crash-after", 0, "crash the counting bolt once after this many words (0: never)")
	flag.Uint64Var(&opts.Seed, "seed", 1, "seed of the failure injection")
	flag.DurationVar(&opts.Timeout, "timeout", 2*time.Minute, "give up after this long")
	verbose := flag.Bool("v", false, "log the runtime's warnings to stderr")
	flag.Parse()
	if *verbose {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, opts, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "squall-demo:", err)
		os.Exit(1)
	}
}

// printReport writes the result of a run.
func printReport(w io.Writer, o options, r report) {
	fmt.Fprintf(w, "squall demo: %d sentences, %.1f%% retryable failures, one acker\n", o.Sentences, 100*o.FailRate)
	fmt.Fprintf(w, "acked      %d (every sentence exactly once)\n", r.Acked)
	fmt.Fprintf(w, "failed     %d (replayed by the source)\n", r.Failed)
	fmt.Fprintf(w, "crashes    %d (worker restarted by the supervisor)\n", r.Crashes)
	fmt.Fprintf(w, "words      %d counted for %d expected: the tuple core is at-least-once,\n", r.WordsCounted, r.WordsExpected)
	fmt.Fprintf(w, "           so words of failed sentences may be counted again\n")
	fmt.Fprintf(w, "elapsed    %v (%.0f sentences/s), complete latency p50 %v, p99 %v\n",
		r.Elapsed.Round(time.Millisecond), float64(o.Sentences)/r.Elapsed.Seconds(), r.P50, r.P99)
}
