package acker

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

// Benchmarks compare the Tracker with mapTracker, the obvious Go-map
// implementation of the same rules, in the same run.

const (
	memTrees       = 1_000_000 // trees held by the memory benchmarks
	opsBackground  = 100_000   // other pending trees under the ops benchmarks
	inFlightWindow = 100_000   // trees in flight in the in-flight benchmarks
)

// mapEntry is the per-root value of mapTracker: the same fields as a
// Tracker entry.
type mapEntry struct {
	val    uint64
	task   TaskID
	bucket uint16
	init   bool
	failed bool
}

// mapTracker is the baseline: Storm's Acker.execute over a Go map, with the
// timeout bucket kept in the value.
type mapTracker struct {
	m   map[RootID]mapEntry
	cur uint16
}

func newMapTracker() *mapTracker { return &mapTracker{m: map[RootID]mapEntry{}} }

func (mt *mapTracker) get(r RootID) mapEntry {
	e, ok := mt.m[r]
	if !ok {
		e = mapEntry{task: NoTask, bucket: mt.cur}
	}
	return e
}

func (mt *mapTracker) settle(r RootID, e mapEntry) Outcome {
	o := Outcome{Root: r, SpoutTask: e.task}
	if e.init && (e.failed || e.val == 0) {
		o.Status = Completed
		if e.failed {
			o.Status = Failed
		}
		delete(mt.m, r)
		return o
	}
	mt.m[r] = e
	return o
}

func (mt *mapTracker) Init(r RootID, xor uint64, task TaskID) Outcome {
	e := mt.get(r)
	e.val ^= xor
	e.task = task
	e.init = true
	e.bucket = mt.cur
	return mt.settle(r, e)
}

func (mt *mapTracker) Ack(r RootID, xor uint64) Outcome {
	e := mt.get(r)
	e.val ^= xor
	return mt.settle(r, e)
}

// id derives a pseudo-random id from a counter and a salt below 8, without
// storing it. Distinct (i, salt) pairs give distinct ids.
func id(i, salt uint64) uint64 { return mix(i<<3 | salt) }

// heapInUse returns the live heap after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// benchMemory fills a new table with n pending trees per op and reports
// the live heap it holds per tree.
func benchMemory(b *testing.B, n int, fill func(n int) any) {
	var perTree float64
	for b.Loop() {
		b.StopTimer()
		before := heapInUse()
		b.StartTimer()
		table := fill(n)
		b.StopTimer()
		after := heapInUse()
		perTree = (float64(after) - float64(before)) / float64(n)
		runtime.KeepAlive(table)
		b.StartTimer()
	}
	b.ReportMetric(perTree, "bytes/tree")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/insert")
}

func fillTracker(b *testing.B) func(n int) any {
	return func(n int) any {
		tr := mustNew(b, Config{})
		rng := rand.New(rand.NewPCG(1, 2))
		for range n {
			tr.Init(RootID(rng.Uint64()), rng.Uint64()|1, 3)
		}
		if tr.Len() != n {
			b.Fatalf("Len() = %d, want %d", tr.Len(), n)
		}
		return tr
	}
}

func fillMap(b *testing.B) func(n int) any {
	return func(n int) any {
		mt := newMapTracker()
		rng := rand.New(rand.NewPCG(1, 2))
		for range n {
			mt.Init(RootID(rng.Uint64()), rng.Uint64()|1, 3)
		}
		if len(mt.m) != n {
			b.Fatalf("len = %d, want %d", len(mt.m), n)
		}
		return mt
	}
}

// BenchmarkAckerPendingMemory holds 1,000,000 pending trees in a Tracker
// and reports the heap bytes per tree. One op fills a new Tracker.
func BenchmarkAckerPendingMemory(b *testing.B) { benchMemory(b, memTrees, fillTracker(b)) }

// BenchmarkAckerPendingMemoryGoMap is BenchmarkAckerPendingMemory for the
// Go-map baseline.
func BenchmarkAckerPendingMemoryGoMap(b *testing.B) { benchMemory(b, memTrees, fillMap(b)) }

// lastGrowthBelow returns the largest number of trees that the index holds
// without growing to the size it has for n trees.
func lastGrowthBelow(n int) int {
	s := minSlots
	for grown(s) < slotsFor(n) {
		s = grown(s)
	}
	return s / 4 * 3
}

// BenchmarkAckerPendingMemorySizes shows how bytes per tree vary with the
// number of pending trees: the index grows by half at 3/4 load, so the
// figure is lowest just before a growth and highest just after.
func BenchmarkAckerPendingMemorySizes(b *testing.B) {
	peak := lastGrowthBelow(memTrees)
	for _, n := range []int{10_000, 100_000, peak, peak + 1, memTrees, 2 * memTrees} {
		b.Run(fmt.Sprintf("tracker/trees=%d", n), func(b *testing.B) { benchMemory(b, n, fillTracker(b)) })
		b.Run(fmt.Sprintf("gomap/trees=%d", n), func(b *testing.B) { benchMemory(b, n, fillMap(b)) })
	}
}

// tracker is what the ops benchmarks drive.
type tracker interface {
	Init(RootID, uint64, TaskID) Outcome
	Ack(RootID, uint64) Outcome
}

// benchCompleteTree measures one op = init + ack + ack + ack of a tree with
// three edges, which completes, among opsBackground other pending trees.
func benchCompleteTree(b *testing.B, tr tracker) {
	for i := range uint64(opsBackground) {
		tr.Init(RootID(id(i, 1)), 1, 0)
	}
	i := uint64(opsBackground)
	b.ResetTimer()
	for b.Loop() {
		r := RootID(id(i, 2))
		e1, e2, e3 := id(i, 3), id(i, 4), id(i, 5)
		tr.Init(r, e1^e2^e3, 1)
		tr.Ack(r, e1)
		tr.Ack(r, e2)
		if o := tr.Ack(r, e3); o.Status != Completed {
			b.Fatalf("tree %d: %v", i, o)
		}
		i++
	}
}

// BenchmarkAckerOps: ns per init+ack+ack+ack of a completing tree, with
// 100,000 other trees pending.
func BenchmarkAckerOps(b *testing.B) { benchCompleteTree(b, mustNew(b, Config{})) }

// BenchmarkAckerOpsGoMap is BenchmarkAckerOps for the Go-map baseline.
func BenchmarkAckerOpsGoMap(b *testing.B) { benchCompleteTree(b, newMapTracker()) }

// benchInFlight measures the same four messages per op, but a tree's acks
// arrive inFlightWindow ops after its init, so about that many trees are in
// flight and the acks find cold entries, as in a loaded topology.
func benchInFlight(b *testing.B, tr tracker) {
	initTree := func(i uint64) {
		tr.Init(RootID(id(i, 2)), id(i, 3)^id(i, 4)^id(i, 5), 1)
	}
	for i := range uint64(inFlightWindow) {
		initTree(i)
	}
	i := uint64(inFlightWindow)
	b.ResetTimer()
	for b.Loop() {
		initTree(i)
		old := i - inFlightWindow
		r := RootID(id(old, 2))
		tr.Ack(r, id(old, 3))
		tr.Ack(r, id(old, 4))
		if o := tr.Ack(r, id(old, 5)); o.Status != Completed {
			b.Fatalf("tree %d: %v", old, o)
		}
		i++
	}
}

// BenchmarkAckerOpsInFlight: ns per init+ack+ack+ack with 100,000 trees in
// flight and acks arriving long after the init.
func BenchmarkAckerOpsInFlight(b *testing.B) { benchInFlight(b, mustNew(b, Config{})) }

// BenchmarkAckerOpsInFlightGoMap is BenchmarkAckerOpsInFlight for the Go-map
// baseline.
func BenchmarkAckerOpsInFlightGoMap(b *testing.B) { benchInFlight(b, newMapTracker()) }

// benchTick measures one Tick over about a million pending trees spread
// evenly over the buckets, so that each Tick expires a 1/buckets share of
// them. Between ticks (untimed) as many new trees arrive as expired, so
// after a while the expiring trees are scattered through the table, as
// swap-removal leaves them.
func benchTick(b *testing.B, buckets int) {
	tr := mustNew(b, Config{TimeoutBuckets: buckets})
	perTick := memTrees / buckets
	next := uint64(0)
	arrive := func() {
		for range perTick {
			tr.Init(RootID(id(next, 1)), 1, 0)
			next++
		}
	}
	for range buckets {
		arrive()
		tick(tr)
	}
	n := 0
	expired := func(Outcome) { n++ }
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		arrive()
		n = 0
		b.StartTimer()
		tr.Tick(expired)
		if n != perTick {
			b.Fatalf("expired %d, want %d", n, perTick)
		}
	}
}

// BenchmarkAckerTickExpireThird: one Tick over a million pending trees in
// three buckets, expiring a third of them (a mass timeout).
func BenchmarkAckerTickExpireThird(b *testing.B) { benchTick(b, 3) }

// BenchmarkAckerTickExpireFew: one Tick over a million pending trees in a
// thousand buckets, expiring a thousand scattered trees.
func BenchmarkAckerTickExpireFew(b *testing.B) { benchTick(b, 1000) }
