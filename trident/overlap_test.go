package trident

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/opaque"
	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/coordstore/boltstore"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/trident/spout/spouttest"
	"github.com/squallstream/squall/txn"
)

// TestOverlappingProcesses runs a rolling deploy gone wrong, over and over:
// "processes" (each a LocalCluster submitting the same topology) share one
// coordination store and one opaque state; each new one starts while the
// previous one still runs, at a random offset, and some are shut down in
// the middle of a batch. In the late variant a superseded process's state
// and coordination writes are held back and arrive after its successor
// wrote. Every word must be counted exactly once, and every superseded
// process that was not shut down must halt with ErrSuperseded.
func TestOverlappingProcesses(t *testing.T) {
	t.Parallel() // with the other seed suites, after the sequential tests
	for _, v := range []struct {
		name  string
		seeds uint64
		store func(t *testing.T) coordstore.Store
		late  bool
	}{
		{"memory", 100, func(*testing.T) coordstore.Store { return coordstore.NewMemory() }, false},
		{"memory-late", 100, func(*testing.T) coordstore.Store { return coordstore.NewMemory() }, true},
		// The processes overlap in one machine, whose page cache keeps
		// what a killed process wrote: the test needs no fsync (NoSync),
		// which would make the disk its cost. Fewer seeds still: every
		// write goes through bbolt.
		{"bolt-late", 10, func(t *testing.T) coordstore.Store {
			s, err := boltstore.Open(t.Context(), filepath.Join(t.TempDir(), "coord.db"), boltstore.Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}, true},
	} {
		for seed := uint64(1); seed <= v.seeds; seed++ {
			t.Run(fmt.Sprintf("%s/seed=%d", v.name, seed), func(t *testing.T) {
				t.Parallel() // a seed shares nothing with the others
				store := v.store(t)
				synctest.Test(t, func(t *testing.T) { runOverlap(t, seed, store, v.late) })
			})
		}
	}
}

func runOverlap(t *testing.T, seed uint64, store coordstore.Store, late bool) {
	rng := rand.New(rand.NewPCG(seed, 7))
	src, want := randomWords(rng, 30)
	// Replays read a different number of records than first attempts.
	src.SetLimit(func(a txn.Attempt, _ spout.Partition) int { return 1 + int(a.N*7)%5 })
	backing := MemoryBacking("counts") // shared by every process, like a database

	var mu sync.Mutex
	delayRng := rand.New(rand.NewPCG(seed, 8))
	delay := func(limit time.Duration) time.Duration {
		mu.Lock()
		defer mu.Unlock()
		return time.Duration(delayRng.Int64N(int64(limit)))
	}
	type process struct {
		c    *topology.LocalCluster
		r    *Running
		down bool
	}
	start := func(n int) *process {
		tt := NewTopology("overlap")
		s := tt.NewStream("words", OpaqueSource(Fields{"partition", "offset", "word"}, src.Lister,
			func(int) spout.Emitter[spouttest.Offsets] { return src.Emitter() }).Parallelism(2))
		g := s.Shuffle().Parallelism(2).Project("word").GroupBy("word").Parallelism(2)
		newMap := backing
		coord := store
		if late && n%2 == 0 {
			// This process's writes are slow: they land after its
			// successor's.
			newMap = func(ctx context.Context, p, n int) (state.BackingMap[[]byte], error) {
				m, err := backing(ctx, p, n)
				return &lateMap{BackingMap: m, delay: delay}, err
			}
			coord = &lateStore{Store: store, delay: delay}
		} else if n%2 == 1 {
			// This process reads through a cache, which a predecessor's
			// late writes must not make stale (they are fenced).
			newMap = Cached(8, backing)
		}
		PersistentAggregate(g, func(ctx context.Context, p, n int) (state.MapState[int64], error) {
			m, err := newMap(ctx, p, n)
			if err != nil {
				return nil, err
			}
			return opaque.New[int64](m, state.MapOptions[int64]{}), nil
		}, Fields{"word"}, count{}, "count")
		cfg := Config{}
		cfg.Store = coord
		cfg.MaxBatchesInFlight = 1 + rng.IntN(3)
		cfg.BatchEmitInterval = time.Millisecond
		cfg.Topology.RestartMinBackoff = 10 * time.Millisecond
		cfg.Topology.MessageTimeout = 5 * time.Second
		cfg.Topology.SpoutIdleWait = 5 * time.Millisecond
		c := topology.NewLocalCluster()
		cfg.Cluster = c
		r, err := tt.Submit(context.Background(), cfg)
		if err != nil {
			t.Fatalf("seed %d: submit process %d: %v", seed, n, err)
		}
		return &process{c: c, r: r}
	}
	shutdown := func(p *process, wait time.Duration) {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		_ = p.c.Shutdown(ctx)
		p.down = true
	}

	var procs []*process
	for n := range 2 + rng.IntN(3) {
		procs = append(procs, start(n))
		time.Sleep(time.Duration(rng.IntN(1500)) * time.Millisecond)
		if n > 0 && rng.IntN(3) == 0 {
			// Killed in the middle of whatever it was doing.
			shutdown(procs[n-1], time.Duration(rng.IntN(100))*time.Millisecond)
		}
	}
	last := procs[len(procs)-1]
	read := func(_ context.Context, part, n int) (state.MapState[int64], error) {
		m, err := backing(context.Background(), part, n) // unfenced: a reader, not an owner
		return opaque.New[int64](m, state.MapOptions[int64]{}), err
	}
	var got map[string]int64
	waitEvery(t, time.Hour, 100*time.Millisecond, "every word to be counted", func() bool {
		if err := last.r.Err(); err != nil {
			t.Fatalf("seed %d: the newest process halted: %v", seed, err)
		}
		got = readCounts(t, read, 2, faultWords...)
		for _, w := range faultWords {
			if got[w] < want[w] {
				return false
			}
		}
		return true
	})
	if err := last.r.WaitCommitted(context.Background(), last.r.Committed()+3); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second) // every held-back write has arrived
	got = readCounts(t, read, 2, faultWords...)
	for _, w := range faultWords {
		if got[w] != want[w] {
			t.Fatalf("seed %d: %q counted %d, want %d (all %v, want %v)", seed, w, got[w], want[w], got, want)
		}
	}
	for i, p := range procs[:len(procs)-1] {
		if p.down {
			continue
		}
		select {
		case <-p.r.Halted():
		case <-time.After(time.Minute):
			t.Fatalf("seed %d: superseded process %d did not halt", seed, i)
		}
		if err := p.r.Err(); !errors.Is(err, ErrSuperseded) {
			t.Fatalf("seed %d: superseded process %d halted with %v, want ErrSuperseded", seed, i, err)
		}
		if p.r.Generation() >= last.r.Generation() {
			t.Fatalf("seed %d: process %d has generation %v, the newest %v", seed, i, p.r.Generation(), last.r.Generation())
		}
	}
	for _, p := range procs {
		shutdown(p, 10*time.Second)
	}
}

// lateMap delays every write by up to 1.5 s, so that it lands after later
// writers'.
type lateMap struct {
	state.BackingMap[[]byte]
	delay func(limit time.Duration) time.Duration
}

func (m *lateMap) MultiPut(ctx context.Context, keys []state.Key, vals [][]byte) error {
	time.Sleep(m.delay(1500 * time.Millisecond))
	return m.BackingMap.MultiPut(ctx, keys, vals)
}

// lateStore delays every coordination write by up to 100 ms.
type lateStore struct {
	coordstore.Store
	delay func(limit time.Duration) time.Duration
}

func (s *lateStore) SwapCoordinator(ctx context.Context, f coordstore.Fence, old coordstore.Version, rec coordstore.Record) (coordstore.Version, error) {
	time.Sleep(s.delay(100 * time.Millisecond))
	return s.Store.SwapCoordinator(ctx, f, old, rec)
}

func (s *lateStore) PutMeta(ctx context.Context, gen coordstore.Generation, k coordstore.Key, txid txn.TxID, v []byte) error {
	time.Sleep(s.delay(100 * time.Millisecond))
	return s.Store.PutMeta(ctx, gen, k, txid, v)
}
