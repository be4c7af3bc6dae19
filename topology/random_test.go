package topology

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestRandomTopologiesAckEveryMessageOnce runs a diamond-shaped topology
// with several spout and bolt tasks, several ackers, tiny batches and queues
// (to exercise backpressure and the spout's drain-while-blocked path) and
// random tuple failures, and checks that every message is eventually acked
// exactly once by a replaying source. A failing seed is printed.
func TestRandomTopologiesAckEveryMessageOnce(t *testing.T) {
	for seed := uint64(1); seed <= 64; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { runRandomTopology(t, seed) })
		})
	}
}

func runRandomTopology(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0))
	failRate := rng.Float64() * 0.2
	f := newFeed()
	f.replay = true
	// failing fails a tuple with probability failRate, else applies next.
	failing := func(next boltFunc) func() Bolt {
		base := rng.Uint64()
		var instances atomic.Uint64
		return func() Bolt {
			r := rand.New(rand.NewPCG(base, instances.Add(1)))
			return boltFunc(func(out *OutputCollector, t *Tuple) {
				if r.Float64() < failRate {
					out.Fail(t)
					return
				}
				next(out, t)
			}).newBolt()
		}
	}
	b := NewBuilder()
	b.Spout("feed", f.newSpout).Parallelism(2).Tasks(3).Output("n")
	b.Bolt("left", failing(identity)).Parallelism(2).Output("n").Input("feed", Shuffle())
	b.Bolt("right", failing(splitTwo)).Tasks(3).Output("n").Input("feed", ByFields("n"))
	b.Bolt("join", failing(identity)).Parallelism(2).Tasks(2).Output("n").
		Input("left", ByFields("n")).Input("right", Shuffle())
	b.Bolt("sink", failing(ackAll)).Input("join", Global())
	cfg := DefaultConfig()
	cfg.Ackers = 1 + rng.IntN(3)
	cfg.BatchSize = 1 + rng.IntN(8)
	cfg.QueueCapacity = 1 + rng.IntN(2)
	cfg.MaxSpoutPending = rng.IntN(20) // 0: unlimited
	cfg.MessageTimeout = time.Minute
	r := submit(t, mustBuild(t, b), cfg)
	const messages = 500
	for i := range messages {
		f.add(i, i)
	}
	deadline := time.Now().Add(time.Hour)
	for {
		settle()
		if acked, _ := f.counts(); acked == messages {
			break
		}
		if time.Now().After(deadline) {
			acked, failed := f.counts()
			t.Fatalf("seed %d: %d of %d acked (%d failures) after an hour of virtual time; cfg %+v",
				seed, acked, messages, failed, cfg)
		}
	}
	for i := range messages {
		if n := f.ackCount(i); n != 1 {
			t.Fatalf("seed %d: message %d acked %d times", seed, i, n)
		}
	}
	if h := r.Health(); h.Crashes != 0 {
		t.Fatalf("seed %d: crashed: %v", seed, h.LastCrash)
	}
	stop(t, r)
}
