package trident

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/internal/sim"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/nontransactional"
	"github.com/squallstream/squall/state/opaque"
	"github.com/squallstream/squall/state/statetest"
	"github.com/squallstream/squall/state/transactional"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/coordstore/faultstore"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/trident/spout/spouttest"
	"github.com/squallstream/squall/txn"
)

// TestExactlyOnceUnderFaults runs a word count and a sum over a partitioned
// source
// with random retryable failures in an operation, in the source, in the
// backing map (including puts that fail after writing part of their keys),
// in the coordination store, and after the state write (in NewValuesStream), one worker crash in the
// processing or the commit phase, batches that time out, and (for the
// opaque flavours) replays that read more than the first attempt did, or
// fewer and different records ("opaque-shrinking": a commit that wrote
// part of its keys and failed is only redone over the same keys because
// the commit froze the batch first). Opaque and transactional state must
// equal the oracle exactly; non-transactional state may only over-count. A
// failing seed is printed; rerun it with
// -run 'TestExactlyOnceUnderFaults/<name>'.
func TestExactlyOnceUnderFaults(t *testing.T) {
	t.Parallel() // with the other seed suites, after the sequential tests
	opaqueSource := func(s *spouttest.Source) Source {
		return OpaqueSource(Fields{"partition", "offset", "word"}, s.Lister, func(int) spout.Emitter[spouttest.Offsets] { return s.Emitter() }).Parallelism(2)
	}
	opaqueState := func(m state.BackingMap[[]byte]) state.MapState[int64] {
		return opaque.New(m, state.MapOptions[int64]{})
	}
	flavours := []struct {
		name    string
		source  func(*spouttest.Source) Source
		wrap    func(state.BackingMap[[]byte]) state.MapState[int64]
		atLeast bool
		limit   func(txn.Attempt, spout.Partition) int // nil: batches of 3
	}{
		{"opaque", opaqueSource, opaqueState, false, growingReplays},
		{"opaque-shrinking", opaqueSource, opaqueState, false, shrinkingReplays},
		{"transactional", func(s *spouttest.Source) Source {
			return TransactionalSource(Fields{"partition", "offset", "word"}, s.Lister, func(int) spout.Emitter[spouttest.Offsets] { return s.Emitter() }).Parallelism(2)
		}, func(m state.BackingMap[[]byte]) state.MapState[int64] {
			return transactional.New(m, state.MapOptions[int64]{})
		}, false, nil},
		{"nontransactional", func(s *spouttest.Source) Source {
			return OpaqueSource(Fields{"partition", "offset", "word"}, s.Lister, func(int) spout.Emitter[spouttest.Offsets] { return s.Emitter() })
		}, func(m state.BackingMap[[]byte]) state.MapState[int64] {
			return nontransactional.New(m, state.MapOptions[int64]{})
		}, true, nil},
	}
	for _, fl := range flavours {
		for seed := uint64(1); seed <= faultSeeds; seed++ {
			t.Run(fmt.Sprintf("%s/seed=%d", fl.name, seed), func(t *testing.T) {
				t.Parallel() // a seed shares nothing with the others
				synctest.Test(t, func(t *testing.T) {
					runFaultyWordCount(t, seed, fl.source, fl.wrap, fl.atLeast, fl.limit)
				})
			})
		}
	}
}

// record names a record of the test source.
type record struct {
	partition spout.Partition
	offset    int64
}

var faultWords = []string{"ant", "bee", "cat", "dog", "eel", "fox"}

// growingReplays makes every replay of an opaque batch read more records
// than the attempt before.
func growingReplays(a txn.Attempt, _ spout.Partition) int { return 3 + int(a.N) }

// shrinkingReplays makes replays read fewer records as often as more, and
// so different ones: 1 to 5 records, varying with the attempt and txid.
func shrinkingReplays(a txn.Attempt, _ spout.Partition) int {
	return 1 + int((uint64(a.N)*7+uint64(a.TxID))%5)
}

// randomWords returns a source of three partitions holding perPartition
// words each, drawn from faultWords with rng, and the count of each word.
func randomWords(rng *rand.Rand, perPartition int) (*spouttest.Source, map[string]int64) {
	src := spouttest.NewSource("p0", "p1", "p2")
	want := map[string]int64{}
	for _, p := range []spout.Partition{"p0", "p1", "p2"} {
		for range perPartition {
			w := faultWords[rng.IntN(len(faultWords))]
			src.Append(p, w)
			want[w]++
		}
	}
	return src, want
}

// sumOffsets sums the "offset" field.
type sumOffsets struct{}

func (sumOffsets) Init(t Tuple) (int64, error) { return t.Get("offset").(int64), nil }
func (sumOffsets) Combine(a, b int64) int64    { return a + b }
func (sumOffsets) Zero() int64                 { return 0 }

func runFaultyWordCount(t *testing.T, seed uint64, newSource func(*spouttest.Source) Source,
	wrap func(state.BackingMap[[]byte]) state.MapState[int64], atLeast bool, limit func(txn.Attempt, spout.Partition) int) {
	rng := rand.New(rand.NewPCG(seed, 1))
	src, want := randomWords(rng, 40)
	if limit != nil {
		src.SetLimit(limit)
	} else {
		src.SetMaxBatch(3)
	}
	// Every fault is decided by the seed and the identity of the call (what
	// it does, and how many times that same call was made before), never by
	// the order in which goroutines reach it: a failing seed fails again.
	faults := sim.NewPlan(seed)
	var calls sim.Calls
	src.SetFault(func(c spouttest.Call) error {
		id := fmt.Sprint(c.Op, c.Attempt.TxID, c.Attempt.N, c.Partition)
		if faults.Chance(0.05, "source", uint64(c.Attempt.TxID), uint64(c.Attempt.N), sim.String(string(c.Partition)), calls.Next(id)) {
			return failure.Retryable(errFlaky)
		}
		return nil
	})
	// The state's backing maps: the topology reads and writes them through
	// a fault-injecting wrapper, the test reads them directly.
	var memMu sync.Mutex
	mems := map[string]*state.Memory{}
	memory := func(name string, p int) *state.Memory {
		memMu.Lock()
		defer memMu.Unlock()
		key := fmt.Sprint(name, p)
		if mems[key] == nil {
			mems[key] = state.NewMemory(key)
		}
		return mems[key]
	}
	faulty := func(name string) StateFactory[int64] {
		return func(_ context.Context, p, _ int) (state.MapState[int64], error) {
			// A map opened anew (after a crash) numbers its calls from 1
			// again, as it does in every run.
			site := fmt.Sprint(name, p, calls.Next(fmt.Sprint("open", name, p)))
			return wrap(statetest.NewFaultMap[[]byte](memory(name, p), func(op statetest.Op, n int, keys []state.Key) statetest.Fault {
				switch {
				case op == statetest.OpGet && faults.Chance(0.03, site, uint64(op), uint64(n)):
					return statetest.Retryable(0)
				case op == statetest.OpPut && faults.Chance(0.1, site, uint64(op), uint64(n)):
					return statetest.Retryable(len(keys) / 2) // part of the keys are written
				}
				return statetest.Fault{}
			})), nil
		}
	}
	clean := func(name string) StateFactory[int64] {
		return func(_ context.Context, p, _ int) (state.MapState[int64], error) { return wrap(memory(name, p)), nil }
	}
	wantSums := map[string]int64{}
	for _, p := range []spout.Partition{"p0", "p1", "p2"} {
		for _, rec := range src.Records(p) {
			wantSums[rec.Value] += rec.Offset
		}
	}

	// The crash and the slow call happen at the first sight of a record
	// drawn by the seed (or, for a crash in the commit, at the n-th new
	// value: commits run one at a time, so that is one batch in every run).
	var crashed, slowed atomic.Bool
	var committed atomic.Int64
	crashInCommit := rng.IntN(2) == 0
	crashAt := record{spout.Partition(fmt.Sprint("p", rng.IntN(3))), int64(rng.IntN(40))}
	slowAt := record{spout.Partition(fmt.Sprint("p", rng.IntN(3))), int64(rng.IntN(40))}
	tt := NewTopology("faulty")
	s := tt.NewStream("words", newSource(src))
	// The operations run after a shuffle, in their own tasks (a slow
	// operation inside the source's emit would hold up the test source).
	g := s.Shuffle().Parallelism(2).Each(Fields{"partition", "offset", "word"}, FunctionFunc(func(_ context.Context, tu Tuple, out Collector) error {
		rec := record{spout.Partition(tu.String("partition")), tu.Get("offset").(int64)}
		if rec == slowAt && slowed.CompareAndSwap(false, true) {
			time.Sleep(11 * time.Second) // over twice the message timeout: the batch times out
		}
		if !crashInCommit && rec == crashAt && crashed.CompareAndSwap(false, true) {
			panic("injected crash")
		}
		if faults.Chance(0.03, "each", sim.String(string(rec.partition)), uint64(rec.offset), calls.Next(fmt.Sprint("each", rec))) {
			return failure.Retryable(errFlaky)
		}
		out.Emit(tu.String("word"))
		return nil
	}), "w").Project("w", "offset").GroupBy("w").Parallelism(2)
	// The counts take the counting path (TupleCounter), the sums Init and
	// Combine.
	st := PersistentAggregate(g, faulty("counts"), Fields{"w"}, tupleCount{}, "count")
	PersistentAggregate(g, faulty("sums"), Fields{"offset"}, sumOffsets{}, "sum")
	st.NewValuesStream().Each(Fields{"w"}, FunctionFunc(func(_ context.Context, tu Tuple, _ Collector) error {
		// Replays of the opaque flavour read more and more, so a run may
		// commit only a few batches: crash at one of the first new values.
		if crashInCommit && committed.Add(1) >= crashAt.offset%3+1 && crashed.CompareAndSwap(false, true) {
			panic("injected crash after the state write")
		}
		w := tu.String("w")
		if faults.Chance(0.02, "new value", sim.String(w), calls.Next("new value "+w)) {
			return failure.Retryable(errFlaky) // fails the commit after the state write
		}
		return nil
	}))
	cfg := Config{}
	cfg.MaxBatchesInFlight = 1 + rng.IntN(3)
	cfg.BatchEmitInterval = time.Millisecond
	// Faults are frequent here and the opaque flavour's batches grow with
	// every replay: keep the backoff short, or a run would spend its
	// virtual hour waiting rather than replaying.
	cfg.RetryBackoff, cfg.MaxRetryBackoff = 5*time.Millisecond, 100*time.Millisecond
	cfg.Topology.RestartMinBackoff = 10 * time.Millisecond
	cfg.Topology.MessageTimeout = 5 * time.Second
	cfg.Topology.SpoutIdleWait = 5 * time.Millisecond
	// The runtime's own randomness (edge ids, shuffles, retry jitter)
	// follows the seed too, so a failing seed reruns with the same draws.
	cfg.Topology.Seed = seed
	// The coordination store fails too, sometimes after a write took
	// effect (the master then crashes on the version conflict and its
	// successor reloads the record).
	cfg.Store = faultstore.Wrap(coordstore.NewMemory(), faultstore.Random(seed, 0.02))
	r := submit(t, tt, cfg)

	var got map[string]int64
	waitEvery(t, time.Hour, time.Second, "every record to be counted", func() bool {
		got = readCounts(t, clean("counts"), 2, faultWords...)
		sums := readCounts(t, clean("sums"), 2, faultWords...)
		for _, w := range faultWords {
			if got[w] < want[w] || sums[w] < wantSums[w] {
				return false
			}
		}
		return true
	})
	// A few more batches, so that a late double count would show.
	if err := r.WaitCommitted(context.Background(), r.Committed()+5); err != nil {
		t.Fatal(err)
	}
	got = readCounts(t, clean("counts"), 2, faultWords...)
	sums := readCounts(t, clean("sums"), 2, faultWords...)
	for _, w := range faultWords {
		if atLeast && sums[w] < wantSums[w] || !atLeast && sums[w] != wantSums[w] {
			t.Fatalf("seed %d: offsets of %q sum to %d, want %d", seed, w, sums[w], wantSums[w])
		}
		if atLeast && got[w] < want[w] || !atLeast && got[w] != want[w] {
			t.Fatalf("seed %d: %q counted %d, want %d (all counts %v, want %v)", seed, w, got[w], want[w], got, want)
		}
	}
	// The slow call makes its batch time out, unless a crash replaced the
	// worker first (most seeds time out; a worker stop waits for it).
	if !slowed.Load() {
		t.Fatalf("seed %d: the slow call did not happen", seed)
	}
	if !crashed.Load() || r.Health().Crashes < 1 {
		t.Fatalf("seed %d: the injected crash did not happen (crashes: %d)", seed, r.Health().Crashes)
	}
}
