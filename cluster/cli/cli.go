// Package cli is the command line of a squall program (squall.Main): the
// daemons (nimbus, supervisor, worker), the client commands (submit, kill,
// activate, deactivate, rebalance, list) and dev, everything in one
// process on an embedded etcd.
//
// Every flag can also be set by an environment variable, SQUALL_<FLAG>
// (dashes as underscores, upper case; e.g. SQUALL_ETCD_ENDPOINTS), or
// SQUALL_<COMMAND>_<FLAG> for one command only (e.g.
// SQUALL_SUPERVISOR_ID); a flag on the command line wins.
//
// The client commands find the leader nimbus through etcd (its ID, the
// value of its election key, is its API address) and send it an HTTP
// request; every change is made by the leader, fenced by its leadership.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/cluster/worker"
)

// Exit codes of the commands (a worker's are those of package meta).
const (
	ExitOK    = 0
	ExitError = 1
	ExitUsage = 2
)

// Registry is a program's topologies, by name.
type Registry struct {
	byName map[string]worker.Topology
	names  []string
}

// NewRegistry checks the topologies: names must be valid and distinct,
// and each must have a Build.
func NewRegistry(topologies []worker.Topology) (*Registry, error) {
	r := &Registry{byName: map[string]worker.Topology{}}
	for _, t := range topologies {
		if err := meta.CheckName("topology", t.Name); err != nil {
			return nil, err
		}
		if t.Build == nil {
			return nil, fmt.Errorf("topology %q has no Build function", t.Name)
		}
		if _, dup := r.byName[t.Name]; dup {
			return nil, fmt.Errorf("topology %q is registered twice", t.Name)
		}
		r.byName[t.Name] = t
		r.names = append(r.names, t.Name)
	}
	slices.Sort(r.names)
	return r, nil
}

// Lookup returns the topology of that name, or an error naming the known
// ones.
func (r *Registry) Lookup(name string) (worker.Topology, error) {
	t, ok := r.byName[name]
	if !ok {
		known := "none"
		if len(r.names) > 0 {
			known = strings.Join(r.names, ", ")
		}
		return t, fmt.Errorf("unknown topology %q; this program registers: %s", name, known)
	}
	return t, nil
}

// Names lists the registered topologies.
func (r *Registry) Names() []string { return slices.Clone(r.names) }

// Program is what the commands run with.
type Program struct {
	Registry       *Registry
	Stdout, Stderr io.Writer
	Getenv         func(string) string    // nil: os.Getenv
	Executable     func() (string, error) // nil: os.Executable
}

type command struct {
	name, args, help string
	run              func(ctx context.Context, p *Program, args []string) error
}

func commands() []command {
	return []command{
		{"dev", "", "run etcd (embedded), a nimbus and a supervisor in this process, submit every topology, serve until interrupted", runDev},
		{"nimbus", "", "run a nimbus: code store, leader election, scheduling, the API", runNimbus},
		{"supervisor", "", "run a supervisor: the worker processes of this machine's slots", runSupervisor},
		{"worker", "", "run one worker of a topology (started by a supervisor)", runWorker},
		{"submit", "NAME", "upload this program and run topology NAME", runSubmit},
		{"kill", "NAME", "stop topology NAME and remove it", runKill},
		{"activate", "NAME", "let topology NAME's sources emit again", runActivate},
		{"deactivate", "NAME", "stop topology NAME's sources from starting batches", runDeactivate},
		{"rebalance", "NAME", "schedule topology NAME afresh (--workers N)", runRebalance},
		{"list", "", "list the submitted topologies", runList},
		{"ca", "init|issue", "create the cluster's CA, issue certificates (see docs/security.md)", runCA},
		{"etcd-auth", "", "turn etcd's authentication on: root, the daemons' users and roles (see docs/cluster.md)", runEtcdAuth},
	}
}

// Run runs the command line args (without the program name) and returns
// the process's exit code.
func Run(ctx context.Context, p *Program, args []string) int {
	if p.Getenv == nil {
		p.Getenv = os.Getenv
	}
	if p.Executable == nil {
		p.Executable = os.Executable
	}
	usage := func() {
		fmt.Fprintf(p.Stderr, "usage: %s COMMAND [flags] [NAME]\n\ncommands:\n", progName())
		for _, c := range commands() {
			fmt.Fprintf(p.Stderr, "  %-11s %-5s %s\n", c.name, c.args, c.help)
		}
		fmt.Fprintf(p.Stderr, "\ntopologies: %s\nRun '%s COMMAND -h' for a command's flags; every flag also reads SQUALL_<FLAG> from the environment.\n",
			strings.Join(p.Registry.Names(), ", "), progName())
	}
	if len(args) == 0 {
		usage()
		return ExitUsage
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage()
		return ExitOK
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, p, args[1:])
		var code exitError
		switch {
		case err == nil:
			return ExitOK
		case errors.Is(err, flag.ErrHelp):
			return ExitOK
		case errors.As(err, &code):
			if code.err != nil {
				fmt.Fprintf(p.Stderr, "%s %s: %v\n", progName(), c.name, code.err)
			}
			return code.code
		case errors.Is(err, errUsage):
			fmt.Fprintf(p.Stderr, "%s %s: %v\n", progName(), c.name, err)
			return ExitUsage
		default:
			fmt.Fprintf(p.Stderr, "%s %s: %v\n", progName(), c.name, err)
			return ExitError
		}
	}
	fmt.Fprintf(p.Stderr, "%s: unknown command %q\n\n", progName(), args[0])
	usage()
	return ExitUsage
}

var errUsage = errors.New("usage")

// usageError marks a bad command line.
func usageError(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errUsage}, args...)...)
}

// exitError carries a specific exit code (a worker's).
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return fmt.Sprintf("exit %d: %v", e.code, e.err) }

func progName() string {
	if len(os.Args) > 0 {
		s := os.Args[0]
		if i := strings.LastIndexByte(s, '/'); i >= 0 {
			s = s[i+1:]
		}
		return s
	}
	return "squall"
}

// parse parses a command's flags (then the environment) and returns the
// positional arguments, which must number want (-1: any).
func parse(p *Program, fs *flag.FlagSet, command string, args []string, want int) ([]string, error) {
	fs.SetOutput(p.Stderr)
	// Flags may follow the name: "submit wordcount --workers 1".
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageError("%v", err)
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if err := refuseSecrets(fs); err != nil {
		return nil, usageError("%v", err)
	}
	if err := applyEnv(fs, command, p.Getenv); err != nil {
		return nil, usageError("%v", err)
	}
	if want >= 0 && len(pos) != want {
		if want == 1 {
			return nil, usageError("want one topology NAME, got %d arguments %q", len(pos), pos)
		}
		return nil, usageError("unexpected arguments %q", pos)
	}
	return pos, nil
}
