package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/squallstream/squall/internal/clock"
	"github.com/squallstream/squall/spouts/kafka/kafkatest"
)

// Topics of the soak's broker (the example's defaults).
const (
	topic = "room-events"
	dlq   = "room-events-dlq"
)

// errGrowth is returned when the resident set or the goroutines grow.
var errGrowth = errors.New("soak: unbounded growth")

// soak is one soak run: the broker, the feed, the run process and the
// samples taken of it.
type soak struct {
	cfg    *config
	out    io.Writer
	dir    string
	bin    string
	broker string
	feed   *feed
	run    *child
	url    string
	client *http.Client
	start  time.Time

	mu      sync.Mutex
	samples []sample
}

// run runs the soak cfg describes, printing to out.
func run(ctx context.Context, cfg *config, out io.Writer) (err error) {
	s := &soak{cfg: cfg, out: out, client: &http.Client{}}
	if err := s.prepare(ctx); err != nil {
		return err
	}
	defer func() {
		if err == nil && !cfg.keep {
			_ = os.RemoveAll(s.dir)
			return
		}
		fmt.Fprintf(out, "soak: the work directory (store, logs) is kept in %s\n", s.dir)
	}()
	broker, err := kafkatest.Start(kafkatest.Config{Topics: []string{topic, dlq}, Partitions: int32(cfg.partitions)})
	if err != nil {
		return fmt.Errorf("soak: starting the embedded broker: %w", err)
	}
	defer broker.Close()
	s.broker = broker.Addrs()[0]
	w := &kafkago.Writer{Addr: kafkago.TCP(s.broker), Topic: topic, Balancer: &kafkago.Hash{},
		RequiredAcks: kafkago.RequireAll, BatchSize: chunk, BatchTimeout: 5 * time.Millisecond, MaxAttempts: 10}
	defer w.Close()
	s.feed = &feed{w: w, days: &days{people: cfg.people, rooms: cfg.rooms, seed: cfg.seed}, rate: cfg.rate, maxLag: cfg.maxLag, lag: s.lag}

	s.run, err = startChild(s.bin, s.runArgs(true), filepath.Join(s.dir, "run.log"), s.feed.fed.Load)
	if err != nil {
		return err
	}
	defer func() {
		if !s.run.exited() {
			_ = s.run.stop(time.Minute)
		}
	}()
	if s.url, err = s.run.monitorURL(ctx); err != nil {
		return err
	}
	s.start = time.Now()
	fmt.Fprintf(out, "soak: roompresence run (pid %d, monitor %s) on the embedded store in %s, broker %s; %s\n",
		s.run.cmd.Process.Pid, s.url, filepath.Join(s.dir, "data"), s.broker, s.describe())

	if err := s.feedAndSample(ctx); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("soak: interrupted: %w", err)
	}
	fed := s.feed.fed.Load()
	_, faults := s.run.state()
	if err := s.run.stop(time.Minute); err != nil {
		return fmt.Errorf("soak: the run process: %w (log: %s)", err, filepath.Join(s.dir, "run.log"))
	}
	fmt.Fprintf(out, "soak: fed %d records in %v; %d faults injected\n", fed, time.Since(s.start).Round(time.Second), faults)
	growth := s.judge()
	if err := s.finish(ctx); err != nil {
		return errors.Join(err, growth)
	}
	return growth
}

// prepare makes the work directory and builds the binary.
func (s *soak) prepare(ctx context.Context) error {
	s.dir = s.cfg.dir
	if s.dir == "" {
		d, err := os.MkdirTemp("", "squall-soak-")
		if err != nil {
			return err
		}
		s.dir = d
	} else if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return err
	}
	s.bin = s.cfg.bin
	if s.bin != "" {
		return nil
	}
	s.bin = filepath.Join(s.dir, "roompresence")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", s.bin, "./examples/roompresence")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("soak: go build ./examples/roompresence (run from the repository root, or give -bin): %w", err)
	}
	return nil
}

// runArgs are the arguments of "roompresence run" on the soak's broker
// and store, with the configured faults or none.
func (s *soak) runArgs(faults bool) []string {
	args := []string{"run", "--kafka", s.broker, "--data", filepath.Join(s.dir, "data"), "--topic", topic, "--dlq", dlq,
		"--partitions", fmt.Sprint(s.cfg.partitions), "--tasks", fmt.Sprint(s.cfg.tasks), "--drpc", ""}
	if !faults {
		return append(args, "--until-caught-up", "--http", "")
	}
	args = append(args, "--http", "127.0.0.1:0")
	if s.cfg.faultRetry > 0 || s.cfg.faultPanic > 0 {
		args = append(args, "--fault-retry", fmt.Sprint(s.cfg.faultRetry), "--fault-panic", fmt.Sprint(s.cfg.faultPanic),
			"--fault-seed", fmt.Sprint(s.cfg.seed))
	}
	return args
}

func (s *soak) describe() string {
	pace := fmt.Sprintf("%d events/s", s.cfg.rate)
	if s.cfg.rate == 0 {
		pace = fmt.Sprintf("as fast as it reads them (at most %d ahead)", s.cfg.maxLag)
	}
	what := fmt.Sprintf("for %v", s.cfg.duration)
	if s.cfg.events > 0 {
		what = fmt.Sprintf("%d events, a sample every %d once caught up", s.cfg.events, s.cfg.mark)
	}
	return fmt.Sprintf("feeding %s %s (%d people, %d rooms a day); faults per timeline tuple and presence batch: retry %v, panic %v; a sample every %v",
		pace, what, s.cfg.people, s.cfg.rooms, s.cfg.faultRetry, s.cfg.faultPanic, s.cfg.interval)
}

// lag is the topology's lag as of its last progress line plus what was
// fed since.
func (s *soak) lag() (int64, bool) {
	p, _ := s.run.state()
	if p.seq == 0 {
		return 0, false
	}
	return p.lag + s.feed.fed.Load() - p.fedAt, true
}

// feedAndSample feeds events and samples every interval, until the
// duration has passed or the events are fed.
func (s *soak) feedAndSample(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 2)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the sampler: owned here, stopped by cancel
		defer wg.Done()
		tick := time.NewTicker(s.cfg.interval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			smp, err := s.sample(ctx)
			if err != nil {
				if ctx.Err() == nil {
					errc <- err
					cancel()
				}
				return
			}
			s.mu.Lock()
			s.samples = append(s.samples, smp)
			s.mu.Unlock()
			fmt.Fprintln(s.out, smp)
		}
	}()
	err := s.feedAll(ctx)
	cancel()
	wg.Wait()
	close(errc)
	return errors.Join(err, <-errc)
}

// feedAll feeds for the duration, or the events with a pause at each mark.
func (s *soak) feedAll(ctx context.Context) error {
	if s.cfg.events == 0 {
		fctx, cancel := context.WithTimeout(ctx, s.cfg.duration)
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- s.feed.run(fctx, -1) }() // stopped by fctx
		var err error
		select {
		case err = <-done:
		case <-s.run.done:
			cancel()
			<-done
			err = fmt.Errorf("soak: the run process exited: %v (log: %s)", s.run.err, filepath.Join(s.dir, "run.log"))
		}
		return err
	}
	for m := int64(s.cfg.mark); ; m += int64(s.cfg.mark) {
		until := min(m, int64(s.cfg.events))
		if err := s.feed.run(ctx, until); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := s.caughtUp(ctx); err != nil {
			return err
		}
		smp, err := s.sample(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(s.out, "soak: after %d events, caught up:\n%s\n", until, smp)
		if until >= int64(s.cfg.events) {
			return nil
		}
	}
}

// caughtUp waits until two progress lines after the feed paused report
// no lag.
func (s *soak) caughtUp(ctx context.Context) error {
	paused := time.Now()
	zeroSeq := 0
	for {
		p, _ := s.run.state()
		switch {
		case !p.at.After(paused):
		case p.lag != 0:
			zeroSeq = 0
		case zeroSeq == 0:
			zeroSeq = p.seq
		case p.seq > zeroSeq:
			return nil
		}
		if s.run.exited() {
			return fmt.Errorf("soak: the run process exited: %v (log: %s)", s.run.err, filepath.Join(s.dir, "run.log"))
		}
		if err := clock.Sleep(ctx, clock.Real(), 200*time.Millisecond); err != nil {
			return err
		}
	}
}

// sample reads the run's resident set and goroutines.
func (s *soak) sample(ctx context.Context) (sample, error) {
	st, err := readStatus(s.run.cmd.Process.Pid)
	if err != nil {
		return sample{}, fmt.Errorf("soak: reading the run's status: %w", err)
	}
	rt, err := scrape(ctx, s.client, s.url)
	if err != nil {
		return sample{}, fmt.Errorf("soak: reading the run's metrics: %w", err)
	}
	p, faults := s.run.state()
	return sample{at: time.Since(s.start), fed: s.feed.fed.Load(), status: st, runtime: rt, progress: p, faults: faults}, nil
}

// finish lets a run without faults commit everything fed, then verifies.
func (s *soak) finish(ctx context.Context) error {
	start := time.Now()
	drain, err := startChild(s.bin, s.runArgs(false), filepath.Join(s.dir, "catch-up.log"), nil)
	if err != nil {
		return err
	}
	if err := drain.wait(ctx); err != nil {
		return fmt.Errorf("soak: the catch-up run: %w (log: %s)", err, filepath.Join(s.dir, "catch-up.log"))
	}
	fmt.Fprintf(s.out, "soak: a run without faults caught up in %v\n", time.Since(start).Round(time.Millisecond))
	start = time.Now()
	cmd := exec.CommandContext(ctx, s.bin, "verify", "--kafka", s.broker, "--data", filepath.Join(s.dir, "data"), "--topic", topic, "--dlq", dlq)
	cmd.Env = append(os.Environ(), "SQUALL_KAFKA_BROKERS=", "SQUALL_CASSANDRA_HOSTS=")
	outb, err := cmd.CombinedOutput()
	for line := range strings.Lines(string(outb)) {
		fmt.Fprint(s.out, "soak: | ", line)
	}
	fmt.Fprintf(s.out, "soak: verify took %v\n", time.Since(start).Round(time.Millisecond))
	if err != nil {
		return fmt.Errorf("soak: verify: %w", err)
	}
	return nil
}
