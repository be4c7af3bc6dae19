package trident

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/internal/sim"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/coordstore/faultstore"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/trident/spout/spouttest"
	"github.com/squallstream/squall/trident/windowstore"
	"github.com/squallstream/squall/txn"
)

// windowFaultSeeds is how many seeds TestWindowsExactlyOnceUnderFaults
// runs (each runs the topology twice: with and without faults).
const windowFaultSeeds = 12

// TestWindowsExactlyOnceUnderFaults runs event-time sliding windows per
// group (with event times that run ahead with the offset, skewed between
// partitions), and tumbling count windows, over a transactional source with
// random retryable failures in the source, in the windows store (Puts
// that fail before or after writing), in the coordination store and
// after the windows' write (in the stream of fired windows, which fails
// the commit after the window stored its record), one worker crash in
// the processing or the commit phase, and compares what the committed
// batches emitted with a fault-free run of the same records: every
// window fires once, with the same result. A failing seed is printed;
// rerun it with -run 'TestWindowsExactlyOnceUnderFaults/seed=<n>'.
func TestWindowsExactlyOnceUnderFaults(t *testing.T) {
	t.Parallel() // with the other seed suites, after the sequential tests
	for seed := uint64(1); seed <= windowFaultSeeds; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel() // a seed shares nothing with the others
			var want, got windowResults
			synctest.Test(t, func(t *testing.T) { want = runWindowFaults(t, seed, false) })
			synctest.Test(t, func(t *testing.T) { got = runWindowFaults(t, seed, true) })
			if len(want.sliding) == 0 || want.counted == 0 {
				t.Fatalf("seed %d: the fault-free run fired no windows", seed)
			}
			if !slices.Equal(got.sliding, want.sliding) {
				t.Fatalf("seed %d: event-time windows under faults differ from the fault-free run:\nonly under faults %q\nonly without %q",
					seed, missing(want.sliding, got.sliding), missing(got.sliding, want.sliding))
			}
			if got.counted != want.counted {
				t.Fatalf("seed %d: count windows hold %d tuples under faults, %d without", seed, got.counted, want.counted)
			}
		})
	}
}

// windowResults is what the committed batches of a run emitted: the
// event-time windows, printed and sorted, and how many tuples the count
// windows held (each at most once).
type windowResults struct {
	sliding []string
	counted int
}

// collectIDs emits the "id" fields of a window's tuples, joined.
type collectIDs struct{}

func (collectIDs) Init(txn.Attempt, Collector) ([]string, error) { return nil, nil }
func (collectIDs) Aggregate(acc []string, t Tuple, _ Collector) ([]string, error) {
	return append(acc, t.String("id")), nil
}
func (collectIDs) Complete(acc []string, out Collector) error {
	out.Emit(strings.Join(acc, ","))
	return nil
}

// faultyWindows wraps a windowstore.Store with seeded failures.
type faultyWindows struct {
	windowstore.Store
	faults sim.Plan
	calls  *sim.Calls
}

func (f faultyWindows) fail(op, id string, txid txn.TxID) bool {
	return f.faults.Chance(0.05, "windows "+op, sim.String(id), uint64(txid), f.calls.Next(fmt.Sprint(op, id, txid)))
}

func (f faultyWindows) Get(ctx context.Context, id string, txid txn.TxID) ([]byte, error) {
	if f.fail("get", id, txid) {
		return nil, failure.Retryable(errFlaky)
	}
	return f.Store.Get(ctx, id, txid)
}

func (f faultyWindows) Last(ctx context.Context, id string, before txn.TxID) (txn.TxID, []byte, error) {
	if f.fail("last", id, before) {
		return 0, nil, failure.Retryable(errFlaky)
	}
	return f.Store.Last(ctx, id, before)
}

func (f faultyWindows) Put(ctx context.Context, id string, txid txn.TxID, rec []byte, prune txn.TxID) error {
	if f.fail("put before", id, txid) {
		return failure.Retryable(errFlaky)
	}
	if err := f.Store.Put(ctx, id, txid, rec, prune); err != nil {
		return err
	}
	if f.fail("put after", id, txid) {
		return failure.Retryable(errFlaky) // written, but the caller sees a failure
	}
	return nil
}

// runWindowFaults runs the windows of the fault test, with or without
// faults, and returns the fired windows the committed batches emitted.
func runWindowFaults(t *testing.T, seed uint64, faulty bool) windowResults {
	rng := rand.New(rand.NewPCG(seed, 1))
	src, _ := randomWords(rng, 40)
	src.SetMaxBatch(3)
	faults := sim.NewPlan(seed)
	var calls sim.Calls
	if faulty {
		src.SetFault(func(c spouttest.Call) error {
			id := fmt.Sprint(c.Op, c.Attempt.TxID, c.Attempt.N, c.Partition)
			if faults.Chance(0.05, "source", uint64(c.Attempt.TxID), uint64(c.Attempt.N), sim.String(string(c.Partition)), calls.Next(id)) {
				return failure.Retryable(errFlaky)
			}
			return nil
		})
	}
	mem := windowstore.NewMemory()
	var store WindowsStore = mem
	if faulty {
		store = faultyWindows{Store: mem, faults: faults, calls: &calls}
	}
	var crashed atomic.Bool
	var fired atomic.Int64
	crashInCommit := rng.IntN(2) == 0
	crashAt := record{spout.Partition(fmt.Sprint("p", rng.IntN(3))), int64(rng.IntN(40))}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

	tt := NewTopology("windows")
	s := TransactionalSource(Fields{"partition", "offset", "word"}, src.Lister, func(int) spout.Emitter[spouttest.Offsets] { return src.Emitter() }).Parallelism(2)
	// Event times run ahead with the offset, skewed between partitions.
	events := tt.NewStream("words", s).Map(MapFunctionFunc(func(_ context.Context, tu Tuple) ([]any, error) {
		rec := record{spout.Partition(tu.String("partition")), tu.Get("offset").(int64)}
		if faulty && !crashInCommit && rec == crashAt && crashed.CompareAndSwap(false, true) {
			panic("injected crash")
		}
		skew := time.Duration(rec.partition[1]-'0') * 25 * time.Second
		return []any{tu.String("word"), rec.offset, base.Add(time.Duration(rec.offset)*10*time.Second + skew), fmt.Sprint(rec)}, nil
	}), "word", "offset", "ts", "id")
	g := events.GroupBy("word").Parallelism(2)
	// How records are split into batches varies with the faults (a
	// coordinator that crashes may start a batch without a partition that
	// catches up later), and lateness is decided per batch: the allowed
	// lateness is far above any lag seen, and the test checks that no
	// tuple was late, so that both runs fire the same windows.
	sliding := WindowGroups(g, SlidingDuration(time.Minute, 20*time.Second).EventTime("ts").AllowedLateness(3*time.Minute).Name("sliding"),
		store, Fields{"offset"}, Combining[int64](count{}), "n")
	// Which tuples share a count window depends on how they were batched
	// (tuples are numbered in txid order), so count windows are checked
	// for each tuple fired at most once, and for the number fired.
	counted := WindowGroups(g, TumblingCount(4).Name("counted"), store, Fields{"id"}, Aggregator[[]string](collectIDs{}), "ids")
	check := func(tu Tuple) error {
		if !faulty {
			return nil
		}
		if crashInCommit && fired.Add(1) == crashAt.offset%5+1 && crashed.CompareAndSwap(false, true) {
			panic("injected crash after the windows' write")
		}
		if faults.Chance(0.03, "fired", sim.String(fmt.Sprint(tu.Values()...)), calls.Next(fmt.Sprint("fired", tu.Values()))) {
			return failure.Retryable(errFlaky) // fails the commit after the windows stored their records
		}
		return nil
	}
	checked := func(s *Stream) *Stream {
		return s.Filter(FilterFunc(func(_ context.Context, tu Tuple) (bool, error) { return true, check(tu) }))
	}
	sink, sink2 := newSink(), newSink() // one each: BeginCommit clears a batch's rows
	sinkTo(checked(sliding).Map(MapFunctionFunc(func(_ context.Context, tu Tuple) ([]any, error) {
		return []any{fmt.Sprint("sliding ", tu.Values())}, nil
	}), "row"), sink)
	sinkTo(checked(counted).Project("ids"), sink2)

	cfg := Config{}
	cfg.MaxBatchesInFlight = 1 + rng.IntN(3)
	cfg.BatchEmitInterval = time.Millisecond
	cfg.RetryBackoff, cfg.MaxRetryBackoff = 5*time.Millisecond, 100*time.Millisecond
	cfg.Topology.RestartMinBackoff = 10 * time.Millisecond
	cfg.Topology.MessageTimeout = 5 * time.Second
	cfg.Topology.SpoutIdleWait = 5 * time.Millisecond
	cfg.Topology.Seed = seed
	if faulty {
		cfg.Store = faultstore.Wrap(coordstore.NewMemory(), faultstore.Random(seed, 0.02))
	}
	r := submit(t, tt, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	// 40 records per partition, 3 per batch: every record is in by txid 14.
	if err := r.WaitCommitted(ctx, 20); err != nil {
		t.Fatalf("seed %d (faulty %v): %v", seed, faulty, err)
	}
	for p := range 2 {
		if late, err := WindowLate(ctx, mem, "sliding", p); err != nil || late != 0 {
			t.Fatalf("seed %d (faulty %v): %d tuples late in task %d (%v): raise the allowed lateness", seed, faulty, late, p, err)
		}
	}
	if faulty && (!crashed.Load() || r.Health().Crashes < 1) {
		t.Fatalf("seed %d: the injected crash did not happen (crashes: %d)", seed, r.Health().Crashes)
	}
	for _, sk := range []*sinkState{sink, sink2} {
		if ch := sk.replaysChanged(); len(ch) > 0 {
			t.Fatalf("seed %d (faulty %v): replayed commits of txids %v emitted other windows", seed, faulty, ch)
		}
	}
	res := windowResults{sliding: sink.rows()}
	seen := map[string]bool{}
	for _, row := range sink2.rows() {
		for _, id := range strings.Split(row, ",") {
			if seen[id] {
				t.Fatalf("seed %d (faulty %v): tuple %s in two count windows", seed, faulty, id)
			}
			seen[id] = true
			res.counted++
		}
	}
	return res
}

// missing returns the elements of b not in a (sorted lists).
func missing(a, b []string) []string {
	var out []string
	for _, x := range b {
		if _, ok := slices.BinarySearch(a, x); !ok {
			out = append(out, x)
		}
	}
	return out
}

// TestProcessingTimeWindowsUnderFaults runs processing-time tumbling
// windows per group under the faults of TestWindowsExactlyOnceUnderFaults.
// Which window a tuple lands in depends on when its batch committed, so
// the checks are: every record is in exactly one fired window, and a
// commit replayed after the state below it completed emits the same
// windows (the record stored under its txid, not a recomputation at a
// later time).
func TestProcessingTimeWindowsUnderFaults(t *testing.T) {
	t.Parallel() // with the other seed suites, after the sequential tests
	for seed := uint64(1); seed <= windowFaultSeeds; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel() // a seed shares nothing with the others
			synctest.Test(t, func(t *testing.T) { runProcessingTimeFaults(t, seed) })
		})
	}
}

func runProcessingTimeFaults(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 2))
	src, _ := randomWords(rng, 40)
	src.SetMaxBatch(3)
	faults := sim.NewPlan(seed)
	var calls sim.Calls
	src.SetFault(func(c spouttest.Call) error {
		id := fmt.Sprint(c.Op, c.Attempt.TxID, c.Attempt.N, c.Partition)
		if faults.Chance(0.05, "source", uint64(c.Attempt.TxID), uint64(c.Attempt.N), sim.String(string(c.Partition)), calls.Next(id)) {
			return failure.Retryable(errFlaky)
		}
		return nil
	})
	store := faultyWindows{Store: windowstore.NewMemory(), faults: faults, calls: &calls}
	var crashed atomic.Bool
	crashAt := record{spout.Partition(fmt.Sprint("p", rng.IntN(3))), int64(rng.IntN(40))}

	tt := NewTopology("ptime-faults")
	s := TransactionalSource(Fields{"partition", "offset", "word"}, src.Lister, func(int) spout.Emitter[spouttest.Offsets] { return src.Emitter() }).Parallelism(2)
	events := tt.NewStream("words", s).Map(MapFunctionFunc(func(_ context.Context, tu Tuple) ([]any, error) {
		rec := record{spout.Partition(tu.String("partition")), tu.Get("offset").(int64)}
		if rec == crashAt && crashed.CompareAndSwap(false, true) {
			panic("injected crash")
		}
		return []any{tu.String("word"), fmt.Sprint(rec)}, nil
	}), "word", "id")
	// Short windows, so that a replay at a later time would often fall in
	// another window.
	fired := WindowGroups(events.GroupBy("word").Parallelism(2), TumblingDuration(20*time.Millisecond).Name("ptime"),
		store, Fields{"id"}, Aggregator[[]string](collectIDs{}), "ids")
	sink := newSink()
	sinkTo(fired.Filter(FilterFunc(func(_ context.Context, tu Tuple) (bool, error) {
		if faults.Chance(0.03, "fired", sim.String(fmt.Sprint(tu.Values()...)), calls.Next(fmt.Sprint("fired", tu.Values()))) {
			return false, failure.Retryable(errFlaky)
		}
		return true, nil
	})).Project("ids"), sink)

	cfg := Config{}
	cfg.MaxBatchesInFlight = 1 + rng.IntN(3)
	cfg.BatchEmitInterval = time.Millisecond
	cfg.RetryBackoff, cfg.MaxRetryBackoff = 5*time.Millisecond, 100*time.Millisecond
	cfg.Topology.RestartMinBackoff = 10 * time.Millisecond
	cfg.Topology.MessageTimeout = 5 * time.Second
	cfg.Topology.SpoutIdleWait = 5 * time.Millisecond
	cfg.Topology.Seed = seed
	cfg.Store = faultstore.Wrap(coordstore.NewMemory(), faultstore.Random(seed, 0.02))
	r := submit(t, tt, cfg)

	var ids map[string]int
	waitEvery(t, time.Hour, 100*time.Millisecond, "every record in a fired window", func() bool {
		ids = map[string]int{}
		for _, row := range sink.rows() {
			for _, id := range strings.Split(row, ",") {
				ids[id]++
			}
		}
		return len(ids) == 120
	})
	// A few more batches, so that a late double would show.
	if err := r.WaitCommitted(context.Background(), r.Committed()+5); err != nil {
		t.Fatal(err)
	}
	ids = map[string]int{}
	for _, row := range sink.rows() {
		for _, id := range strings.Split(row, ",") {
			ids[id]++
		}
	}
	for id, n := range ids {
		if n != 1 {
			t.Fatalf("seed %d: record %s in %d windows", seed, id, n)
		}
	}
	if ch := sink.replaysChanged(); len(ch) > 0 {
		t.Fatalf("seed %d: replayed commits of txids %v emitted other windows", seed, ch)
	}
	if !crashed.Load() || r.Health().Crashes < 1 {
		t.Fatalf("seed %d: the injected crash did not happen", seed)
	}
}
