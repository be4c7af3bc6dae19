package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/internal/nemesis"
)

// timeline is a schedule's log of what the nemesis did and what the
// observer saw, with times from the schedule's start (timeline.txt).
type timeline struct {
	mu    sync.Mutex
	f     *os.File
	start time.Time
}

func (t *timeline) printf(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.f, "%9.3fs  %s\n", time.Since(t.start).Seconds(), fmt.Sprintf(format, args...))
}

// episodeResult is what one episode measured.
type episodeResult struct {
	Kinds []nemesis.Kind `json:"kinds"` // the first fault's kind first
	// ToCommit is the time from the heal to the first commit after it;
	// zero with Live false when none came within the bound.
	ToCommit time.Duration `json:"to_commit"`
	Live     bool          `json:"live"`
	// ToDetect is the time from the episode's first fault to the first
	// signal of a reaction of the cluster (detect.go) while the faults
	// held; Signal names it, and is empty when none came before the heal.
	ToDetect time.Duration `json:"to_detect"`
	Signal   string        `json:"signal,omitempty"`
}

// result is one schedule's outcome.
type result struct {
	Seed        uint64          `json:"seed"`
	Episodes    []episodeResult `json:"episodes"`
	Mismatches  int             `json:"mismatches"`
	SplitBrains []string        `json:"split_brains,omitempty"`
	// Liveness counts the heals not followed by a commit within the
	// bound, and a final catch-up that did not finish in time.
	Liveness int           `json:"liveness_failures"`
	Err      string        `json:"error,omitempty"`
	Dir      string        `json:"dir"`
	Took     time.Duration `json:"took"`
}

func (r result) failed() bool {
	return r.Mismatches > 0 || len(r.SplitBrains) > 0 || r.Liveness > 0 || r.Err != ""
}

// runSchedule runs the schedule of seed on a fresh cluster, then checks
// the results with verify.
func (h *harness) runSchedule(ctx context.Context, seed uint64) (res result) {
	start := time.Now()
	res = result{Seed: seed, Dir: filepath.Join(h.dir, fmt.Sprintf("seed-%d", seed))}
	defer func() { res.Took = time.Since(start).Round(time.Second) }()
	fail := func(err error) result {
		res.Err = err.Error()
		return res
	}
	sched, err := nemesis.Generate(seed, nemesis.Config{Cluster: h.cluster, Episodes: h.cfg.episodes, Kinds: h.cfg.kinds})
	if err != nil {
		return fail(err)
	}
	if err := os.MkdirAll(res.Dir, 0o755); err != nil {
		return fail(err)
	}
	f, err := os.Create(filepath.Join(res.Dir, "timeline.txt"))
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	tl := &timeline{f: f, start: start}
	fmt.Fprintf(f, "%s\n", sched.Format())
	ctx, cancel := context.WithTimeout(ctx, h.scheduleBound(sched))
	defer cancel()
	defer h.net.heal(context.Background()) // a schedule that failed mid-episode leaves no rule behind

	tc, err := h.observerTLS()
	if err != nil {
		return fail(err)
	}
	obs, err := newObserver(h.etcdEndpoints(), tc, nsDialer{path: "/run/netns/" + h.net.ns(obsHost)}, meta.New("/squall"),
		tl.printf)
	if err != nil {
		return fail(err)
	}
	defer obs.close()
	var wg sync.WaitGroup
	wctx, stopWatch := context.WithCancel(ctx)
	wg.Add(2)
	go func() { defer wg.Done(); obs.watch(wctx) }()
	go func() { defer wg.Done(); obs.watchSignals(wctx) }()
	defer wg.Wait()
	defer stopWatch()

	c := newCluster(h, res.Dir, seed)
	defer c.stop(context.Background())
	tl.printf("starting etcd, nimbuses and supervisors")
	if err := c.start(ctx, func() *observer { return obs }); err != nil {
		return fail(err)
	}
	tl.printf("submitted; writing part 0 of the events")
	prod, err := newProducer(obs.dial, h.kafkaAddr(), c.topic, c.dlq, seed, len(sched.Episodes)+2, h.cfg.events)
	if err != nil {
		return fail(err)
	}
	defer prod.close()
	if err := prod.ensureTopics(ctx); err != nil {
		return fail(err)
	}
	if err := prod.part(ctx, false); err != nil {
		return fail(err)
	}
	if _, ok := obs.waitCommit(ctx, 0, time.Now().Add(3*time.Minute)); !ok {
		return fail(fmt.Errorf("no first commit within 3 minutes"))
	}
	tl.printf("first commit seen")

	for i, ep := range sched.Episodes {
		genErr := make(chan error, 1)
		go func() { genErr <- prod.part(ctx, false) }() // owner: this loop, which receives
		t0 := time.Now()
		act := newActor(c, obs, tl)
		var healed, faulted time.Time
		for _, a := range sched.Actions(i) {
			sleep(ctx, time.Until(t0.Add(a.At)))
			if ctx.Err() != nil {
				return fail(ctx.Err())
			}
			if s, _ := obs.status(); true {
				tl.printf("episode %d: committed %d, share 0 pid %d on %s", i+1, s.Committed, s.PID, s.Slot)
			}
			if a.Op == nemesis.Heal {
				if err := act.heal(ctx); err != nil {
					return fail(err)
				}
				healed = time.Now()
				continue
			}
			if faulted.IsZero() && a.Op != nemesis.Restart {
				faulted = time.Now()
			}
			if err := act.apply(ctx, a); err != nil {
				act.heal(ctx)
				return fail(err)
			}
		}
		before, _ := obs.status()
		at, ok := obs.waitCommit(ctx, before.Committed, healed.Add(h.cfg.bound))
		er := episodeResult{Kinds: ep.Kinds(), Live: ok}
		if sg, seen := obs.sigs.first(faulted, healed); seen {
			er.ToDetect, er.Signal = sg.At.Sub(faulted), sg.Name
			tl.printf("episode %d: fault -> detection (%s) in %v", i+1, sg.Name, er.ToDetect.Round(time.Millisecond))
		} else {
			tl.printf("episode %d: no reaction of the cluster seen while the faults held", i+1)
		}
		if ok {
			er.ToCommit = at.Sub(healed)
			tl.printf("episode %d: heal -> first commit (txid > %d) in %v", i+1, before.Committed, er.ToCommit.Round(time.Millisecond))
		} else {
			res.Liveness++
			tl.printf("LIVENESS: episode %d: no commit within %v of the heal", i+1, h.cfg.bound)
		}
		res.Episodes = append(res.Episodes, er)
		if err := <-genErr; err != nil {
			return fail(err)
		}
	}

	// The last part, then every record committed, then the check.
	if err := prod.part(ctx, true); err != nil {
		return fail(err)
	}
	tl.printf("%d records written", prod.written)
	var left int64 = -1
	err = waitFor(ctx, h.cfg.catchUp, "catch-up", func() bool {
		n, err := kafkaProgress(ctx, obs.dial, h.kafkaAddr(), c.topic)
		if err == nil {
			left = n
		}
		return err == nil && n == 0
	})
	if err != nil {
		res.Liveness++
		tl.printf("LIVENESS: %d records still uncommitted %v after the last part was written", left, h.cfg.catchUp)
	} else {
		tl.printf("every record committed")
	}
	out, verr := c.client(ctx, "verify", "--keyspace", c.space, "--topic", c.topic, "--dlq", c.dlq)
	os.WriteFile(filepath.Join(res.Dir, "verify.txt"), []byte(out), 0o644)
	m := verifyLine.FindStringSubmatch(out)
	if m == nil {
		return fail(fmt.Errorf("verify: %v: %s", verr, lastLines(out, 5)))
	}
	res.Mismatches, _ = strconv.Atoi(m[1])
	tl.printf("verify: %s mismatches", m[1])
	res.SplitBrains = obs.splitBrains()
	return res
}

// verifyLine is the summary line of the program's verify command.
var verifyLine = regexp.MustCompile(`verify: (\d+) mismatches`)

// scheduleBound is the time a schedule may take at most: set-up, each
// episode's hold and its liveness bound, the catch-up and the check.
func (h *harness) scheduleBound(s nemesis.Schedule) time.Duration {
	d := 5*time.Minute + h.cfg.catchUp
	for _, e := range s.Episodes {
		d += e.Hold + h.cfg.bound + 30*time.Second
	}
	return d
}
