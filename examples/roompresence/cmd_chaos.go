package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// chaosFlags configure the chaos command.
type chaosFlags struct {
	faults   int
	seed     uint64
	services string
	down     time.Duration
	gap      time.Duration
	tasks    int
	logs     string
}

func cmdChaos(ctx context.Context, args []string) error {
	var o options
	var g genFlags
	var c chaosFlags
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	o.register(fs)
	g.register(fs)
	fs.IntVar(&c.faults, "faults", 20, "faults to inject")
	fs.Uint64Var(&c.seed, "chaos-seed", 1, "seed of the fault plan")
	fs.StringVar(&c.services, "services", "scripts/services.sh", "the services script that stops and restarts Kafka and Cassandra")
	fs.DurationVar(&c.down, "down", 5*time.Second, "how long Cassandra stays stopped")
	fs.DurationVar(&c.gap, "gap", 3*time.Second, "longest pause between two external faults")
	fs.IntVar(&c.tasks, "tasks", 2, "parallelism of the spout, presence and timeline steps")
	fs.StringVar(&c.logs, "logs", "", "directory for the run processes' full logs (default: a new temporary directory)")
	if err := o.parse(fs, args, true); err != nil {
		return err
	}
	if c.faults < 0 || c.down < 0 || c.gap <= 0 {
		return fmt.Errorf("--faults and --down must not be negative, --gap must be positive")
	}
	if _, err := os.Stat(c.services); err != nil {
		return fmt.Errorf("--services: %w (run from the repository root, or name the script)", err)
	}
	if c.logs == "" {
		dir, err := os.MkdirTemp("", "roompresence-chaos-")
		if err != nil {
			return err
		}
		c.logs = dir
	}
	fmt.Fprintf(os.Stderr, "chaos: the run processes log to %s\n", c.logs)
	if g.events > 0 {
		if _, err := generate(ctx, &o, &g, os.Stderr); err != nil {
			return err
		}
	}
	plan := planFaults(c.faults, len(o.cassHosts()) > 0, c.seed)
	fmt.Fprintf(os.Stderr, "chaos: %s\n", plan)
	res, err := runChaos(ctx, &o, &c, plan, os.Stderr)
	fmt.Fprintf(os.Stderr, "chaos: %s\n", res)
	if err != nil {
		return err
	}
	return verifyStore(ctx, &o)
}

// faultPlan is how many faults of each kind chaos injects.
type faultPlan struct {
	inProcess      int // retryable failures and worker panics, inside the run process
	kills          int // SIGKILL of the run process, then a restart
	kafkaRestarts  int
	cassandraStops int
	order          []string // the external faults, in order
}

func (p faultPlan) String() string {
	return fmt.Sprintf("%d in-process faults (retryable failures and worker panics), %d process kills, %d Kafka restarts, %d Cassandra stops",
		p.inProcess, p.kills, p.kafkaRestarts, p.cassandraStops)
}

// planFaults splits n faults among the kinds: a fifth are process kills,
// a tenth each service restarts (Cassandra only when it is used), the rest
// in-process.
func planFaults(n int, cassandra bool, seed uint64) faultPlan {
	p := faultPlan{kills: n / 5, kafkaRestarts: n / 10}
	if cassandra {
		p.cassandraStops = n / 10
	}
	p.inProcess = n - p.kills - p.kafkaRestarts - p.cassandraStops
	for range p.kills {
		p.order = append(p.order, "kill")
	}
	for range p.kafkaRestarts {
		p.order = append(p.order, "kafka")
	}
	for range p.cassandraStops {
		p.order = append(p.order, "cassandra")
	}
	rng := rand.New(rand.NewPCG(seed, 0xc4a05))
	rng.Shuffle(len(p.order), func(i, j int) { p.order[i], p.order[j] = p.order[j], p.order[i] })
	return p
}

// chaosResult is what chaos did.
type chaosResult struct {
	injected map[string]int
	starts   int
	recovery []time.Duration // after each kill: restart to first commit
	took     time.Duration
}

func (r chaosResult) String() string {
	var rec []string
	for _, d := range r.recovery {
		rec = append(rec, d.Round(10*time.Millisecond).String())
	}
	return fmt.Sprintf("injected %v in %v; %d run processes; first commit after a kill's restart: %s",
		r.injected, r.took.Round(time.Millisecond), r.starts, strings.Join(rec, " "))
}

// runChaos runs the run command as a child process until it has caught
// up, injecting the plan's faults: its in-process faults through the
// child's fault flags, the others from here.
func runChaos(ctx context.Context, o *options, c *chaosFlags, plan faultPlan, logw io.Writer) (chaosResult, error) {
	start := time.Now()
	res := chaosResult{injected: map[string]int{}}
	rng := rand.New(rand.NewPCG(c.seed, 0x5eed))
	pending := plan.order
	var inProcess atomic.Int64
	for {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		left := plan.inProcess - int(inProcess.Load())
		logPath := filepath.Join(c.logs, fmt.Sprintf("run-%02d.log", res.starts+1))
		ch, err := startRun(ctx, o, c, max(left, 0), rng.Uint64(), &inProcess, logw, logPath)
		if err != nil {
			return res, err
		}
		res.starts++
		killed := false
		for len(pending) > 0 && !killed {
			wait := time.Duration(rng.Int64N(int64(c.gap))) + 500*time.Millisecond
			select {
			case <-ch.done:
			case <-time.After(wait):
			case <-ctx.Done():
			}
			if ch.exited() || ctx.Err() != nil {
				break
			}
			kind := pending[0]
			pending = pending[1:]
			res.injected[kind]++
			fmt.Fprintf(logw, "chaos: %s\n", describeFault(kind, c))
			switch kind {
			case "kill":
				ch.kill()
				killed = true
			case "kafka":
				err = services(ctx, c.services, "restart", "kafka")
			case "cassandra":
				err = services(ctx, c.services, "stop", "cassandra")
				if err == nil {
					select {
					case <-time.After(c.down):
					case <-ctx.Done():
					}
					err = services(context.WithoutCancel(ctx), c.services, "start", "cassandra")
				}
			}
			if err != nil {
				ch.kill()
				return res, err
			}
		}
		err = ch.wait()
		if killed {
			if d := ch.firstCommit(); d > 0 && res.starts > 1 {
				res.recovery = append(res.recovery, d)
			}
			continue
		}
		if res.starts > 1 && len(res.recovery) < res.injected["kill"] {
			if d := ch.firstCommit(); d > 0 {
				res.recovery = append(res.recovery, d)
			}
		}
		res.injected["in-process"] = int(inProcess.Load())
		res.took = time.Since(start)
		if err != nil {
			return res, fmt.Errorf("the run process failed: %w", err)
		}
		if len(pending) == 0 {
			return res, nil
		}
	}
}

func describeFault(kind string, c *chaosFlags) string {
	switch kind {
	case "kill":
		return "killing the run process (SIGKILL) and starting it again"
	case "kafka":
		return "restarting the Kafka broker"
	default:
		return fmt.Sprintf("stopping Cassandra for %v", c.down)
	}
}

// child is one run process.
type child struct {
	cmd     *exec.Cmd
	done    chan struct{}
	err     error
	started time.Time
	mu      sync.Mutex
	commit  time.Duration // from start to its first commit; 0: none yet
}

// startRun starts "roompresence run --until-caught-up" with up to budget
// in-process faults, counting the faults it reports into injected.
// Its stderr goes to logPath; lines starting with "run:" are also copied
// to logw.
func startRun(ctx context.Context, o *options, c *chaosFlags, budget int, seed uint64, injected *atomic.Int64, logw io.Writer, logPath string) (*child, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args := []string{"run", "--until-caught-up", "-v", "--kafka", o.kafka, "--cassandra", o.cassandra, "--keyspace", o.keyspace,
		"--data", o.data, "--topic", o.topic, "--dlq", o.dlq, "--partitions", fmt.Sprint(o.partitions), "--tasks", fmt.Sprint(c.tasks)}
	if budget > 0 {
		args = append(args, "--fault-retry", "0.01", "--fault-panic", "0.005", "--fault-limit", fmt.Sprint(budget), "--fault-seed", fmt.Sprint(seed))
	}
	cmd := exec.Command(self, args...)
	cmd.Env = append(append(os.Environ(), kafkaVar+"=", cassandraVar+"="), o.sec.env()...)
	out, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = logw
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	ch := &child{cmd: cmd, done: make(chan struct{}), started: time.Now()}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting the run process: %w", err)
	}
	go func() {
		defer logFile.Close()
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logFile, line)
			if strings.HasPrefix(line, "run:") {
				fmt.Fprintln(logw, "  | "+line)
			}
			if strings.HasPrefix(line, "run: injected ") {
				injected.Add(1)
			}
			if strings.HasPrefix(line, "run: first commit ") {
				ch.mu.Lock()
				ch.commit = time.Since(ch.started)
				ch.mu.Unlock()
			}
		}
		_, _ = io.Copy(logFile, out) // a line too long for the scanner
		ch.err = cmd.Wait()
		close(ch.done)
	}()
	return ch, nil
}

func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

func (c *child) kill() {
	_ = c.cmd.Process.Kill()
	<-c.done
}

func (c *child) wait() error {
	<-c.done
	var ee *exec.ExitError
	if errors.As(c.err, &ee) && !ee.Exited() {
		return nil // killed by us
	}
	return c.err
}

func (c *child) firstCommit() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.commit
}

// services runs the services script.
func services(ctx context.Context, script string, verb, name string) error {
	out, err := exec.CommandContext(ctx, script, verb, name).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s %s: %w\n%s", script, verb, name, err, out)
	}
	return nil
}
