// Command roompresence is squall's flagship example: badge readers report
// people entering and leaving rooms; squall keeps one presence row per
// visit and an hourly timeline per room, exactly once, through failures.
//
// Without a command it runs everything in one process on embedded
// defaults (an in-process Kafka-protocol broker and a bbolt store): it
// generates a day of events, runs the topology until it has caught up,
// verifies the results against the events and prints a room's day.
//
//	go run ./examples/roompresence                 # embedded, no services
//	go run ./examples/roompresence gen   --kafka 127.0.0.1:19092 --events 1000000
//	go run ./examples/roompresence run   --kafka ... --cassandra 127.0.0.1:19042
//	go run ./examples/roompresence query --cassandra ... --room room-03 --day 2026-01-05
//	go run ./examples/roompresence verify --kafka ... --cassandra ...
//	go run ./examples/roompresence chaos  --kafka ... --cassandra ... --faults 20
//	roompresence cluster nimbus|supervisor|submit roompresence|list ...   (squall.Main's commands)
//
// See docs/roompresence.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/squallstream/squall"
)

// errMismatch is returned by verify when the stored results differ from
// the events.
var errMismatch = errors.New("verify: the stored results differ from the events")

var commands = map[string]func(ctx context.Context, args []string) error{
	"gen":     cmdGen,
	"run":     cmdRun,
	"query":   cmdQuery,
	"verify":  cmdVerify,
	"rebuild": cmdRebuild,
	"chaos":   cmdChaos,
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	args := os.Args[1:]
	// The cluster commands: "cluster nimbus|supervisor|submit|...", and
	// "worker", as supervisors start the program's workers.
	if len(args) > 0 && (args[0] == "cluster" || args[0] == "worker") {
		if args[0] == "cluster" {
			args = args[1:]
		}
		code := squall.Run(ctx, args, clusterTopology(os.Getenv))
		stop()
		os.Exit(code)
	}
	cmd := cmdEmbedded
	if len(args) > 0 {
		if c, ok := commands[args[0]]; ok {
			cmd, args = c, args[1:]
		} else if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
			usage()
			return
		} else if args[0][0] != '-' {
			fmt.Fprintf(os.Stderr, "roompresence: unknown command %q\n", args[0])
			usage()
			os.Exit(2)
		}
	}
	if err := cmd(ctx, args); err != nil {
		fmt.Fprintln(os.Stderr, "roompresence:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprint(os.Stderr, `usage: roompresence [command] [flags]

With no command: generate a day of events, run the topology until it has
caught up and verify the results, all in this process (embedded broker and
store unless --kafka / --cassandra or SQUALL_KAFKA_BROKERS /
SQUALL_CASSANDRA_HOSTS name real services).

commands:
  gen     write a generated day of events to Kafka
  run     run the topology (until interrupted, or --until-caught-up)
  query   print a room's hourly occupancy for a day
  verify  compare the stored results with the whole topic
  rebuild replay everything into the next version of the tables, verify it,
          switch readers to it (--drop-old: drop the older versions' tables)
  chaos   run while injecting faults, then verify
  cluster the cluster's commands with the topology "roompresence":
          cluster nimbus|supervisor|submit roompresence|list|kill roompresence|...
          (workers read their settings from the supervisors' environment:
          SQUALL_KAFKA_BROKERS, SQUALL_CASSANDRA_HOSTS, ROOMPRESENCE_<FLAG>;
          see docs/roompresence.md, "On the cluster")

Run "roompresence <command> -h" for a command's flags.
`)
}
