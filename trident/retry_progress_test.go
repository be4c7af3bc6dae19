package trident

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/coordstore/faultstore"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// retryProbe injects retryable failures at a seeded rate, either into
// batches (an operation fails the attempt while it is processed: the
// coordinator's backoff) or into the master's coordinator writes (a
// failed SwapCoordinator: the master's own backoff), and records, in
// virtual time, every wait from a failure to the next try and every
// commit.
type retryProbe struct {
	rng        *rand.Rand // the draws, in the order of the tries (one master: a fixed order)
	rate       float64    // of failed batch attempts, or of failed coordinator writes
	inStore    bool       // the failures hit the coordinator writes, not the batches
	forced     int        // a run of this many consecutive failures, once
	forceAfter int        // commits before the forced run
	dropAfter  int        // commits before the rate drops to 0

	mu        sync.Mutex
	failing   bool
	forcing   int         // failures of the forced run still to inject
	run       int         // consecutive failures since the last progress
	failedAt  time.Time   // the last injected failure, not yet tried again
	failedRun int         // run at failedAt
	waits     []retryWait // failure to next try
	commits   []time.Time
	dropped   time.Time // when the rate dropped to 0
	dropIndex int       // commits before the drop
	committed int
	seen      map[[2]int64]bool // attempts whose first tuple was seen
}

// retryWait is one measured wait: the run of consecutive failures it
// followed (1 for the first since the last progress) and its length.
type retryWait struct {
	run  int
	wait time.Duration
}

// fail reports whether the try at hand fails, and notes it. progress
// says what a success is: a commit for batches (the coordinator resets
// its backoff then), any successful write for the master.
func (p *retryProbe) fail(draw bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if !p.failedAt.IsZero() {
		p.waits = append(p.waits, retryWait{p.failedRun, now.Sub(p.failedAt)})
		p.failedAt = time.Time{}
	}
	if p.forcing == 0 && p.forced > 0 && p.committed >= p.forceAfter && p.run == 0 {
		p.forcing, p.forced = p.forced, 0
	}
	fail := p.forcing > 0 || p.failing && draw
	if !fail {
		return false
	}
	if p.forcing > 0 {
		p.forcing--
	}
	p.run++
	p.failedAt, p.failedRun = now, p.run
	// The rate drops right after the first failure of a run, once enough
	// commits came: without a reset, the replay would wait the backoff
	// of every failure so far.
	if p.failing && p.forcing == 0 && p.forced == 0 && p.committed >= p.dropAfter && p.run == 1 {
		p.failing, p.dropped, p.dropIndex = false, now, len(p.commits)
	}
	return true
}

// draw reports whether the try at hand fails at the probe's rate.
func (p *retryProbe) draw() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rng.Float64() < p.rate
}

// progress notes a success that resets the backoff under test.
func (p *retryProbe) progress() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.run = 0
}

// commit notes that a batch committed.
func (p *retryProbe) commit() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.commits = append(p.commits, time.Now())
	p.committed++
	if !p.inStore {
		p.run = 0
	}
}

// probeSpout emits two tuples per batch, carrying the attempt, for as
// long as the topology runs, and tells the probe of every commit.
type probeSpout struct{ p *retryProbe }

func (s probeSpout) EmitBatch(_ context.Context, a txn.Attempt, c spout.Collector) error {
	for range 2 {
		c.Emit(int64(a.TxID), int64(a.N), "w")
	}
	return nil
}

func (s probeSpout) Ack(context.Context, txn.TxID) error {
	s.p.commit()
	return nil
}

// TestRetryBackoffResetsOnProgress runs a topology under a 30 % rate of
// retryable failures, of batch attempts (the coordinator's backoff) or of
// the master's coordinator writes (the master's backoff), then drops the
// rate to 0. It checks that
//   - every wait follows the backoff of the failures since the last
//     progress only: the first failure after a commit (batches) or after a
//     successful write (master) waits at most the base backoff, never the
//     backoff of all the failures so far;
//   - no wait exceeds the configured maximum: with a small maximum and a
//     forced run of six failures, the waits stop growing at it;
//   - after the rate drops, the next commit comes within the base backoff
//     and a few emit intervals, not the 30 s cap;
//   - commits keep coming under the 30 % rate (the time between commits is
//     logged: median and max, in virtual time).
func TestRetryBackoffResetsOnProgress(t *testing.T) {
	const interval = 50 * time.Millisecond // the default BatchEmitInterval
	for _, c := range []struct {
		name    string
		inStore bool
		base    time.Duration
		max     time.Duration // 0: the default
		forced  int
	}{
		{"batches/default", false, 0, 0, 0},
		{"store/default", true, 0, 0, 0},
		{"batches/max-400ms", false, 100 * time.Millisecond, 400 * time.Millisecond, 6},
		{"store/max-400ms", true, 100 * time.Millisecond, 400 * time.Millisecond, 6},
	} {
		var all []time.Duration // time between commits under the rate, every seed
		var drops []time.Duration
		for seed := uint64(1); seed <= retrySeeds; seed++ {
			t.Run(fmt.Sprintf("%s/seed=%d", c.name, seed), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					p := &retryProbe{rng: rand.New(rand.NewPCG(seed, 0x7265747279)), rate: 0.3, inStore: c.inStore,
						forced: c.forced, forceAfter: 20, dropAfter: 60, failing: true}
					tt := NewTopology("retry-progress")
					s := tt.NewStream("batches", BatchSource(Fields{"tx", "n", "w"}, func() spout.Batcher { return probeSpout{p} }))
					g := s.Each(Fields{"tx", "n", "w"}, FunctionFunc(func(_ context.Context, tu Tuple, out Collector) error {
						tx, n := tu.Get("tx").(int64), tu.Get("n").(int64)
						// One decision per attempt, at its first tuple (the
						// attempt's second tuple shares it).
						if !c.inStore && p.firstOfAttempt(tx, n) &&
							p.fail(p.draw()) {
							return failure.Retryable(errFlaky)
						}
						out.Emit(tu.String("w"))
						return nil
					}), "word").GroupBy("word")
					counts := OpaqueMemory[int64]("counts")
					PersistentAggregate(g, counts, Fields{"word"}, count{}, "count")

					cfg := Config{BatchEmitInterval: interval, RetryBackoff: c.base, MaxRetryBackoff: c.max}
					cfg.Store = faultstore.Wrap(coordstore.NewMemory(), faultstore.InjectorFunc(func(op faultstore.Op) faultstore.Fault {
						if !c.inStore || op.Method != "SwapCoordinator" {
							return faultstore.Fault{}
						}
						if p.fail(p.draw()) {
							return faultstore.Fault{Err: failure.Retryable(errFlaky)}
						}
						p.progress()
						return faultstore.Fault{}
					}))
					r := submit(t, tt, cfg)
					waitEvery(t, time.Hour, 10*time.Millisecond, "the rate to drop", func() bool {
						p.mu.Lock()
						defer p.mu.Unlock()
						return !p.dropped.IsZero()
					})
					target := r.Committed() + 5
					ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
					defer cancel()
					if err := r.WaitCommitted(ctx, target); err != nil {
						t.Fatal(err)
					}

					p.mu.Lock()
					defer p.mu.Unlock()
					base, limit := cfg.retryBounds()
					checkRetryWaits(t, p.waits, base, limit, interval, c.forced)
					// (ii) After the drop, the next commit within the base
					// backoff and a few emit intervals.
					i := p.dropIndex
					if i == len(p.commits) {
						t.Fatalf("no commit after the rate dropped")
					}
					toCommit := p.commits[i].Sub(p.dropped)
					if bound := base + 4*interval; toCommit > bound {
						t.Errorf("the next commit came %v after the rate dropped, want at most %v (the base backoff %v and four emit intervals)",
							toCommit, bound, base)
					}
					// (iii) Commits keep coming under the 30 % rate.
					var gaps []time.Duration
					for j := 1; j < i; j++ {
						gaps = append(gaps, p.commits[j].Sub(p.commits[j-1]))
					}
					all = append(all, gaps...)
					drops = append(drops, toCommit)
					slices.Sort(gaps)
					failed := 0
					for _, w := range p.waits {
						if w.run > 0 {
							failed++
						}
					}
					t.Logf("%s: %d commits under 30 %% failures (%d failures), time between commits median %v max %v; rate dropped at commit %d, next commit %v later; longest wait %v",
						c.name, i, failed, gaps[len(gaps)/2], gaps[len(gaps)-1], i, toCommit, longestWait(p.waits))
					if i < p.dropAfter {
						t.Fatalf("%d commits before the drop, want at least %d", i, p.dropAfter)
					}
					if got := readCounts(t, counts, 1, "w"); got["w"] != 2*int64(r.Committed()) {
						t.Fatalf("count %d after %d committed batches of 2 tuples", got["w"], r.Committed())
					}
				})
			})
		}
		if len(all) > 0 {
			slices.Sort(all)
			slices.Sort(drops)
			t.Logf("%s over %d seeds: time between commits under 30 %% failures: median %v, max %v (%d commits); rate drop to next commit: median %v, max %v",
				c.name, retrySeeds, all[len(all)/2], all[len(all)-1], len(all), drops[len(drops)/2], drops[len(drops)-1])
		}
	}
}

// retrySeeds is the number of seeded runs of each case.
const retrySeeds = 10

// firstOfAttempt reports whether this is the first tuple of attempt
// (tx, n) seen, so that each attempt draws one failure decision.
func (p *retryProbe) firstOfAttempt(tx, n int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.seen == nil {
		p.seen = map[[2]int64]bool{}
	}
	if p.seen[[2]int64{tx, n}] {
		return false
	}
	p.seen[[2]int64{tx, n}] = true
	return true
}

// checkRetryWaits checks every measured wait against the backoff of the
// run of failures it followed: at most base·2^(run-1), capped at limit,
// plus one emit interval (waits are counted in ticks, rounded up) and
// one more for the tick that emits; with a forced run, the cap is reached.
func checkRetryWaits(t *testing.T, waits []retryWait, base, limit, interval time.Duration, forced int) {
	t.Helper()
	for _, w := range waits {
		nominal := min(limit, base<<(w.run-1))
		if w.wait > nominal+2*interval {
			t.Errorf("a try came %v after failure %d of a run (since the last progress), want at most %v (base %v, max %v)",
				w.wait, w.run, nominal, base, limit)
		}
		if w.wait > limit+2*interval {
			t.Errorf("a wait of %v exceeds the configured maximum %v", w.wait, limit)
		}
	}
	if forced > 0 {
		if l := longestWait(waits); l < limit/2 {
			t.Errorf("a forced run of %d failures waited at most %v, want the cap %v (jittered down by at most half) reached", forced, l, limit)
		}
	}
}

// longestWait returns the longest of waits.
func longestWait(waits []retryWait) time.Duration {
	var l time.Duration
	for _, w := range waits {
		l = max(l, w.wait)
	}
	return l
}
