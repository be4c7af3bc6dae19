// Package squall is the entry point of a squall program in cluster mode:
// the user's own binary, holding its topologies as Go code, is also the
// cluster's daemons and its command line.
//
//	func main() {
//		squall.Main(squall.Topology{Name: "wordcount", Build: buildWordCount})
//	}
//
// gives the program the commands dev (everything in one process on an
// embedded etcd, the default to try things), nimbus, supervisor, worker
// (started by supervisors), submit NAME, kill NAME, activate NAME,
// deactivate NAME, rebalance NAME and list. See docs/cluster.md.
package squall

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/squallstream/squall/cluster/cli"
	"github.com/squallstream/squall/cluster/worker"
)

// Topology registers a topology by name with the function that builds it
// (and its trident.Config) in every worker that runs it.
type Topology = worker.Topology

// Env is what a Topology's Build learns about where it runs.
type Env = worker.Env

// Main runs the command line of a program registering topologies, and
// exits. SIGINT and SIGTERM stop the running command.
func Main(topologies ...Topology) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Run(ctx, os.Args[1:], topologies...)
	stop()
	os.Exit(code)
}

// Run is Main without the exit: it runs the command line args (without the
// program's name) and returns the exit code.
func Run(ctx context.Context, args []string, topologies ...Topology) int {
	reg, err := cli.NewRegistry(topologies)
	if err != nil {
		fmt.Fprintf(os.Stderr, "squall: bad registry: %v\n", err)
		return cli.ExitUsage
	}
	return cli.Run(ctx, &cli.Program{Registry: reg, Stdout: os.Stdout, Stderr: os.Stderr}, args)
}
