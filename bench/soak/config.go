package main

import (
	"errors"
	"flag"
	"fmt"
	"time"
)

// config is the soak's configuration, from its flags. The zero value is
// not usable: register sets every default.
type config struct {
	duration time.Duration // how long to run (when events is 0)
	interval time.Duration // between samples
	events   int           // > 0: run this many events instead of for duration
	mark     int           // with events: pause, let the topology catch up and sample every mark events
	rate     int           // events a second; 0: as fast as the topology keeps up (at most maxLag ahead)
	maxLag   int64         // most records the feed runs ahead of the topology when rate is 0
	people   int           // badge holders of each generated day (about 20 events each)
	rooms    int           // rooms of each generated day

	faultRetry, faultPanic float64 // per timeline tuple and presence batch, as roompresence run injects them
	seed                   uint64  // of the events and the faults

	tasks, partitions int
	rssTol            tolerance // of the resident set, bytes
	goroutineTol      tolerance // of the goroutine count

	bin  string // the roompresence binary; empty: build it
	dir  string // work directory; empty: a new temporary one
	keep bool   // keep the work directory
}

// register defines the soak's flags on fs, with their defaults.
func (c *config) register(fs *flag.FlagSet) {
	fs.DurationVar(&c.duration, "duration", 30*time.Minute, "how long to feed events and sample (ignored with -events)")
	fs.DurationVar(&c.interval, "interval", time.Minute, "between two samples of the resident set and the goroutines")
	fs.IntVar(&c.events, "events", 0, "feed this many events, then stop (0: feed for -duration)")
	fs.IntVar(&c.mark, "mark", 1_000_000, "with -events: every this many events, pause the feed until the topology has caught up and print a sample")
	fs.IntVar(&c.rate, "rate", 2000, "events a second to feed (0: as fast as the topology keeps up, at most -max-lag ahead)")
	fs.Int64Var(&c.maxLag, "max-lag", 50_000, "with -rate 0: most records the feed runs ahead of the topology")
	fs.IntVar(&c.people, "people", 50, "people of each generated day (about 20 events each); the days follow each other, so the fewer, the sooner new room hours fill the timeline caches (at 50, about 230 room hours every 1,000 events: the timeline caches, 10,000 room hours a task, are full after about 90,000 events)")
	fs.IntVar(&c.rooms, "rooms", 12, "rooms of each generated day")
	fs.Float64Var(&c.faultRetry, "fault-retry", 2e-5, "probability of an injected retryable failure (a replay of the batch), per tuple reaching the timeline step and per presence batch (roompresence run --fault-retry)")
	fs.Float64Var(&c.faultPanic, "fault-panic", 1e-5, "probability of an injected worker panic (a restart of the worker), likewise (roompresence run --fault-panic)")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the events and of the faults")
	fs.IntVar(&c.tasks, "tasks", 2, "parallelism of the spout, presence and timeline steps")
	fs.IntVar(&c.partitions, "partitions", 8, "partitions of the events topic")
	fs.Float64Var(&c.rssTol.rel, "rss-tolerance", 0.10, "share by which the last third's peak resident set may exceed the middle third's")
	fs.Float64Var(&c.rssTol.abs, "rss-slack-mib", 8, "and this many MiB more")
	fs.Float64Var(&c.goroutineTol.rel, "goroutine-tolerance", 0.10, "share by which the last third's peak goroutine count may exceed the middle third's")
	fs.Float64Var(&c.goroutineTol.abs, "goroutine-slack", 10, "and this many goroutines more")
	fs.StringVar(&c.bin, "bin", "", "the roompresence binary (empty: go build ./examples/roompresence into the work directory; run from the repository root)")
	fs.StringVar(&c.dir, "dir", "", "work directory: the binary, the embedded store, the run's logs (empty: a new temporary directory)")
	fs.BoolVar(&c.keep, "keep", false, "keep the work directory (always kept when the soak fails)")
}

// validate reports flags out of range.
func (c *config) validate() error {
	var errs []error
	if c.interval <= 0 {
		errs = append(errs, fmt.Errorf("-interval %v: must be positive", c.interval))
	}
	if c.events < 0 || (c.events == 0 && c.duration <= 0) {
		errs = append(errs, fmt.Errorf("-events %d and -duration %v: give a positive one", c.events, c.duration))
	}
	if c.events > 0 && c.mark <= 0 {
		errs = append(errs, fmt.Errorf("-mark %d: must be positive", c.mark))
	}
	if c.rate < 0 || c.maxLag <= 0 {
		errs = append(errs, fmt.Errorf("-rate %d must not be negative, -max-lag %d must be positive", c.rate, c.maxLag))
	}
	if c.people < 1 || c.rooms < 1 || c.tasks < 1 || c.partitions < 1 {
		errs = append(errs, errors.New("-people, -rooms, -tasks and -partitions must be positive"))
	}
	if c.faultRetry < 0 || c.faultPanic < 0 || c.faultRetry+c.faultPanic > 1 {
		errs = append(errs, fmt.Errorf("-fault-retry %v and -fault-panic %v: probabilities, summing to at most 1", c.faultRetry, c.faultPanic))
	}
	if err := c.rssTol.validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.goroutineTol.validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
