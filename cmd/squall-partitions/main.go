// Command squall-partitions is the partition harness (docs/partitions.md):
// it runs squall's cluster, with certificates, on hosts that are network
// namespaces joined by a bridge (three etcd members, two nimbuses, three
// worker hosts, and Kafka and Cassandra on a host of their own), runs the
// room-presence topology against the real Kafka and Cassandra, and drives
// faults on seeded schedules (internal/nemesis): partitions, one-way
// drops, packet loss, slow links, kill -9, SIGSTOP, an etcd member down, a
// frozen node. After each episode's heal it measures the time to the
// topology's next commit (the liveness bound); after the last, it checks
// every stored row against the events with the program's verify.
//
// Usage (as root; `make partitions` runs it through scripts/partitions.sh):
//
//	squall-partitions [-repo DIR] [-schedules N] [-seed S] [-episodes N] [-dir DIR] [-mutant forgetful|unfenced]
//
// The last line it prints is exactly
//
//	partitions: N schedules, M mismatches, L liveness failures
//
// and it exits 1 when M or L is above 0 (a split brain it observes counts
// as a mismatch) or a schedule could not run. Without root, network
// namespaces or iptables it prints a SKIP line and exits 0, unless CI is
// true, where it fails.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/squallstream/squall/internal/nemesis"
)

// config is the harness's configuration, from flags and environment.
type config struct {
	repo      string
	schedules int
	seed      uint64
	episodes  int
	events    int // per part
	dir       string
	mutant    string
	keep      bool
	kinds     []nemesis.Kind // nil: every kind
	lostReply float64        // per timeline write, chance of an answer lost after it landed
	bound     time.Duration  // heal → first commit
	catchUp   time.Duration
}

func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("squall-partitions", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.repo, "repo", ".", "the squall repository (its scripts/services.sh, examples and cmd)")
	fs.IntVar(&c.schedules, "schedules", envInt(getenv, "PARTITION_SCHEDULES", 2), "seeded schedules to run ($PARTITION_SCHEDULES)")
	seed := fs.Uint64("seed", 0, "the first schedule's seed; the others follow it ($PARTITION_SEED; default: from the clock)")
	fs.IntVar(&c.episodes, "episodes", 4, "episodes per schedule")
	fs.IntVar(&c.events, "events", 3000, "about how many events each of the episodes+2 parts writes")
	fs.StringVar(&c.dir, "dir", getenv("PARTITION_DIR"), "the run's directory; a failing schedule's logs stay in it ($PARTITION_DIR; default: a new one under $TMPDIR)")
	fs.StringVar(&c.mutant, "mutant", getenv("PARTITION_MUTANT"), "build a broken program the harness must catch: forgetful or unfenced ($PARTITION_MUTANT)")
	fs.BoolVar(&c.keep, "keep", false, "keep the logs of passing schedules too")
	kinds := fs.String("kinds", getenv("PARTITION_KINDS"), "comma-separated fault kinds the episodes draw from ($PARTITION_KINDS; default: all)")
	fs.Float64Var(&c.lostReply, "lost-replies", 0.1, "per timeline write, the chance that its answer is lost after it landed "+
		"(the workload's ROOMPRESENCE_FAULT_WRITE, at most 3 per worker process): batches replay over their own writes")
	fs.DurationVar(&c.bound, "bound", 60*time.Second, "liveness: longest time from a heal to the next commit")
	fs.DurationVar(&c.catchUp, "catch-up", 4*time.Minute, "liveness: longest time to commit every record after the last part")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	c.seed = *seed
	for _, k := range strings.Split(*kinds, ",") {
		if k = strings.TrimSpace(k); k == "" {
			continue
		}
		kind, err := nemesis.ParseKind(k)
		if err != nil {
			return c, err
		}
		c.kinds = append(c.kinds, kind)
	}
	if s := getenv("PARTITION_SEED"); s != "" && !flagSet(fs, "seed") {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return c, fmt.Errorf("PARTITION_SEED=%q: %w", s, err)
		}
		c.seed = v
	} else if !flagSet(fs, "seed") {
		c.seed = uint64(time.Now().UnixNano()%1_000_000) + 1
	}
	if _, ok := mutantTags[c.mutant]; !ok {
		return c, fmt.Errorf("-mutant %q: want forgetful or unfenced", c.mutant)
	}
	if c.schedules < 1 || c.episodes < 1 || c.events < 100 || c.lostReply < 0 || c.lostReply > 1 || c.bound <= 0 || c.catchUp <= 0 {
		return c, errors.New("-schedules and -episodes must be positive, -events at least 100, the bounds positive")
	}
	return c, nil
}

func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func envInt(getenv func(string) string, name string, def int) int {
	if v, err := strconv.Atoi(getenv(name)); err == nil {
		return v
	}
	return def
}

// preflight says why the harness cannot run here ("" when it can).
func preflight(ctx context.Context) string {
	if os.Geteuid() != 0 {
		return "not root: network namespaces, veth pairs and iptables need root"
	}
	for _, tool := range []string{"ip", "iptables", "tc"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Sprintf("no %s on PATH (scripts/partitions.sh installs iptables; ip and tc are in iproute2)", tool)
		}
	}
	name := fmt.Sprintf("sqp%d-check", os.Getpid())
	if err := run(ctx, "ip", "netns", "add", name); err != nil {
		return "no network namespaces: " + err.Error()
	}
	defer run(ctx, "ip", "netns", "del", name)
	if err := run(ctx, "ip", "netns", "exec", name, "iptables", "-w", "-A", "INPUT", "-s", subnet+".9", "-j", "DROP"); err != nil {
		return "iptables does not work in a network namespace: " + err.Error()
	}
	return ""
}

func ciTrue(getenv func(string) string) bool {
	v, err := strconv.ParseBool(getenv("CI"))
	return err == nil && v
}

func main() {
	os.Exit(mainExit(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

func mainExit(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	cfg, err := parseConfig(args, getenv, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "partitions:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if why := preflight(ctx); why != "" {
		if ciTrue(getenv) {
			fmt.Fprintf(stdout, "partitions: FAIL: cannot run under CI: %s\n", why)
			return 1
		}
		fmt.Fprintf(stdout, "partitions: SKIP: %s\n", why)
		return 0
	}
	return runAll(ctx, cfg, stdout)
}

// runAll runs the schedules and prints their summary last.
func runAll(ctx context.Context, cfg config, out io.Writer) int {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	removeStale(ctx, log)
	dir := cfg.dir
	if dir == "" {
		d, err := os.MkdirTemp("", "squall-partitions-")
		if err != nil {
			fmt.Fprintln(out, "partitions:", err)
			return 1
		}
		dir = d
	}
	dir, _ = filepath.Abs(dir)
	cfg.repo, _ = filepath.Abs(cfg.repo)
	cluster := nemesis.DefaultCluster()
	h := &harness{cfg: cfg, out: out, cluster: cluster, dir: dir,
		net: &network{prefix: nsPrefix(os.Getpid()), ips: hostIPs(cluster), hosts: cluster.Hosts(), log: log}}
	h.say("run directory %s; seeds %d..%d; %d episodes each; mutant %q", dir, cfg.seed, cfg.seed+uint64(cfg.schedules)-1,
		cfg.episodes, cfg.mutant)
	var results []result
	errs := 0
	func() {
		defer h.teardown()
		if err := h.prepare(ctx); err != nil {
			h.say("error: %v", err)
			errs++
			return
		}
		for i := range cfg.schedules {
			if ctx.Err() != nil {
				break
			}
			r := h.runSchedule(ctx, cfg.seed+uint64(i))
			results = append(results, r)
			h.report(r)
			if r.Err != "" {
				errs++
			}
		}
	}()
	if ctx.Err() != nil {
		h.say("interrupted: %v", ctx.Err())
		errs++
	}
	h.figures(results)
	b, _ := json.MarshalIndent(results, "", "  ")
	os.WriteFile(filepath.Join(dir, "results.json"), b, 0o644)
	mismatches, liveness, failed := 0, 0, false
	for _, r := range results {
		mismatches += r.Mismatches + len(r.SplitBrains)
		liveness += r.Liveness
		failed = failed || r.failed()
		if !r.failed() && !cfg.keep {
			os.RemoveAll(r.Dir)
		}
	}
	if !failed && errs == 0 && !cfg.keep {
		os.RemoveAll(dir)
	} else {
		for s := range h.svcDirs {
			os.RemoveAll(filepath.Join(dir, "services-"+s, "lib"))
		}
	}
	fmt.Fprintf(out, "partitions: %d schedules, %d mismatches, %d liveness failures\n", len(results), mismatches, liveness)
	if mismatches > 0 || liveness > 0 || errs > 0 {
		return 1
	}
	return 0
}
