package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/squallstream/squall/cluster/codestore"
	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/cluster/nimbus"
	"github.com/squallstream/squall/cluster/pki"
)

// clientFlags are the flags of the client commands.
type clientFlags struct {
	etcd    etcdFlags
	certs   certFlags
	nimbus  string
	timeout time.Duration
}

func (c *clientFlags) register(fs *flag.FlagSet) {
	c.etcd.register(fs)
	c.certs.register(fs, "client (role client or admin)")
	fs.StringVar(&c.nimbus, "nimbus", "", "address (host:port) of the nimbus to ask; default: the leader, found in etcd")
	fs.DurationVar(&c.timeout, "timeout", 2*time.Minute, "bound of the whole command")
}

// connect returns a nimbus client and a function releasing it.
func (c *clientFlags) connect(ctx context.Context) (*nimbus.Client, context.Context, func(), error) {
	bundle, err := c.certs.load(pki.Client, pki.Admin)
	if err != nil {
		return nil, nil, nil, usageError("%v", err)
	}
	cli, err := c.etcd.client()
	if err != nil {
		return nil, nil, nil, err
	}
	if c.nimbus == "" {
		if err := c.etcd.reach(ctx, cli); err != nil {
			cli.Close()
			return nil, nil, nil, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	return &nimbus.Client{Etcd: cli, Keys: meta.New(c.etcd.prefix), Nimbus: c.nimbus, Bundle: bundle}, ctx,
		func() { cancel(); cli.Close() }, nil
}

// Fingerprint of a registered topology in this binary: its name and the
// binary's build information (trident does not expose its plan yet).
func Fingerprint(name string) string {
	f, err := codestore.CurrentFingerprint(codestore.Plan{Components: []codestore.Component{{Name: name, Parallelism: 1}}}.Canonical())
	if err != nil {
		return ""
	}
	return f.String()
}

func runSubmit(ctx context.Context, p *Program, args []string) error {
	fs := flag.NewFlagSet("submit", flag.ContinueOnError)
	var c clientFlags
	c.register(fs)
	workers := fs.Int("workers", 1, "worker processes of the topology: its executors are spread over them")
	pos, err := parse(p, fs, "submit", args, 1)
	if err != nil {
		return err
	}
	name := pos[0]
	t, err := p.Registry.Lookup(name)
	if err != nil {
		return err
	}
	if *workers < 1 {
		return usageError("--workers %d: want at least 1", *workers)
	}
	// What the topology needs of the supervisors, from the loads it
	// declares: computed here, where its code is, by building it for
	// planning only (worker.Env.Planning); the nimbus never builds it.
	demand, err := planDemand(t, *workers, slog.New(slog.NewTextHandler(p.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		return err
	}
	exe, err := p.Executable()
	if err != nil {
		return fmt.Errorf("finding this program's binary to upload: %w", err)
	}
	nc, ctx, done, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer done()
	s, err := nc.Submit(ctx, name, *workers, Fingerprint(name), demand, exe)
	if err != nil {
		return err
	}
	fmt.Fprintf(p.Stdout, "submitted %s: artifact %s, %d worker(s), %s\n", s.Topology, s.Artifact, s.Workers, s.Status)
	if need, ok := largestShare(s.Demand, s.Workers); ok {
		fmt.Fprintf(p.Stdout, "  it declares loads: each worker is placed where %d%% CPU and %d MB are free"+
			" (see squall list if it is not scheduled)\n", need.CPU, need.MemoryMB)
	}
	return nil
}

func runKill(ctx context.Context, p *Program, args []string) error {
	return simple(ctx, p, "kill", args, func(ctx context.Context, nc *nimbus.Client, name string) (string, error) {
		return "killed " + name, nc.Kill(ctx, name)
	})
}

func runActivate(ctx context.Context, p *Program, args []string) error {
	return simple(ctx, p, "activate", args, func(ctx context.Context, nc *nimbus.Client, name string) (string, error) {
		s, err := nc.Activate(ctx, name)
		return fmt.Sprintf("%s is %s", name, s.Status), err
	})
}

func runDeactivate(ctx context.Context, p *Program, args []string) error {
	return simple(ctx, p, "deactivate", args, func(ctx context.Context, nc *nimbus.Client, name string) (string, error) {
		s, err := nc.Deactivate(ctx, name)
		return fmt.Sprintf("%s is %s", name, s.Status), err
	})
}

func simple(ctx context.Context, p *Program, command string, args []string,
	do func(context.Context, *nimbus.Client, string) (string, error)) error {
	fs := flag.NewFlagSet(command, flag.ContinueOnError)
	var c clientFlags
	c.register(fs)
	pos, err := parse(p, fs, command, args, 1)
	if err != nil {
		return err
	}
	nc, ctx, done, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer done()
	msg, err := do(ctx, nc, pos[0])
	if err != nil {
		return err
	}
	fmt.Fprintln(p.Stdout, msg)
	return nil
}

func runRebalance(ctx context.Context, p *Program, args []string) error {
	fs := flag.NewFlagSet("rebalance", flag.ContinueOnError)
	var c clientFlags
	c.register(fs)
	workers := fs.Int("workers", 0, "worker processes of the topology (0: unchanged)")
	pos, err := parse(p, fs, "rebalance", args, 1)
	if err != nil {
		return err
	}
	if *workers < 0 {
		return usageError("--workers %d: want at least 1 (or 0: unchanged)", *workers)
	}
	nc, ctx, done, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer done()
	s, err := nc.Rebalance(ctx, pos[0], *workers)
	if err != nil {
		return err
	}
	fmt.Fprintf(p.Stdout, "rebalancing %s over %d worker(s)\n", s.Topology, s.Workers)
	return nil
}

func runList(ctx context.Context, p *Program, args []string) error {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	var c clientFlags
	c.register(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if _, err := parse(p, fs, "list", args, 0); err != nil {
		return err
	}
	nc, ctx, done, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer done()
	// Without --nimbus, list reads etcd itself: it answers while no
	// nimbus leads (a leader change) or none runs.
	var ts []nimbus.TopologyInfo
	if c.nimbus == "" {
		ts, err = nimbus.List(ctx, nc.Etcd, nc.Keys)
	} else {
		ts, err = nc.List(ctx)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(p.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(ts)
	}
	return writeList(p.Stdout, ts)
}

// writeList prints the topologies as a table, then, for each topology the
// scheduler could not place, why (the assignment's Unscheduled).
func writeList(w io.Writer, ts []nimbus.TopologyInfo) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATUS\tWORKERS\tASSIGNED\tRUNNING\tCOMMITTED\tCRASHES\tERRORS\tARTIFACT")
	for _, t := range ts {
		var assigned, running []string
		if t.Assignment != nil {
			for _, w := range t.Assignment.Workers {
				assigned = append(assigned, w.Slot.String())
			}
			if t.Assignment.Unscheduled != "" {
				assigned = []string{"unscheduled"}
			}
		}
		for _, w := range t.Workers {
			running = append(running, fmt.Sprintf("%s(pid %d)", w.Slot, w.PID))
		}
		committed := "-"
		if t.Status != nil {
			committed = fmt.Sprint(t.Status.Committed)
		}
		crashes := 0
		for _, c := range t.Crashes {
			crashes += c.Crashes
		}
		errs := 0
		for _, e := range t.Errors {
			errs += len(e.Errors)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%d\t%d\t%.12s\n", t.Spec.Topology, t.Spec.Status, t.Spec.Workers,
			orDash(strings.Join(assigned, ",")), orDash(strings.Join(running, ",")), committed, crashes, errs, t.Spec.Artifact)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, t := range ts {
		if t.Assignment != nil && t.Assignment.Unscheduled != "" {
			if _, err := fmt.Fprintf(w, "%s: not scheduled: %s\n", t.Spec.Topology, t.Assignment.Unscheduled); err != nil {
				return err
			}
		}
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
