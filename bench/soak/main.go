// Command soak runs room presence for a long time on the embedded
// defaults, with injected faults, and checks that its memory and its
// goroutines stay flat and that its results stay exactly once.
//
// It starts an in-process Kafka-protocol broker (spouts/kafka/kafkatest)
// and "roompresence run" as a child process on it, with the embedded
// bbolt store, the monitor on a loopback port and the run's own fault
// injection (retryable failures, which replay the batch, and worker
// panics, which restart the worker), as "roompresence chaos" injects
// them. It feeds generated days of events, one after another, at a
// bounded rate (-rate, 2,000 events a second by default) or as fast as
// the topology reads them (-rate 0). Every -interval it samples the
// child's resident set (/proc/<pid>/status) and its goroutines (the
// monitor's /metrics) and prints a line. At the end it stops the feed
// and the run, lets a run without faults catch up, runs "roompresence
// verify" (every presence row and room hour against the events, every
// malformed record in the dead-letter topic) and judges growth (growth.go):
// it exits 1 on a mismatch or when the resident set or the goroutines
// grow.
//
//	go run ./bench/soak                                   # make soak: 30 minutes, a sample a minute
//	go run ./bench/soak -duration 3m -interval 15s        # the short run
//	go run ./bench/soak -events 5000000 -rate 0 -fault-retry 0 -fault-panic 0   # RSS at 1 M, 2 M ... 5 M events
//
// With -events N it feeds N events instead, pausing every -mark events
// until the topology has caught up, and prints a sample there.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var cfg config
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	cfg.register(fs)
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		os.Exit(2)
	}
	if err := cfg.validate(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := run(ctx, &cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "soak: FAIL:", err)
		os.Exit(1)
	}
	fmt.Println("soak: PASS")
}
