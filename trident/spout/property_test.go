package spout_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"pgregory.net/rapid"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/coordstore/faultstore"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/trident/spout/spouttest"
	"github.com/squallstream/squall/txn"
)

// flight is a batch attempt the model's batch coordinator has in flight.
type flight struct {
	a       txn.Attempt
	b       spout.Batch
	emitted []bool  // by task
	tuples  [][]rec // by task
	failed  bool    // an emission failed; the batch coordinator will hear
}

func (f *flight) complete() bool { return !slices.Contains(f.emitted, false) }

func (f *flight) content() []rec { return sortRecs(slices.Concat(f.tuples...)) }

// model plays a pipelined runtime around a rig with the batch
// allocator's rules (commits in txid order, a failure discards the
// batch and every later one, attempt numbers only grow), lagging tasks,
// failed commits after part of the state was written, restarts with
// another number of tasks, and a source that grows, gains partitions and
// changes its batch size. The oracle: per partition, the records of the
// committed batches, in commit order, are the source's records from
// offset 0, each once, in offset order.
type model struct {
	t         *rapid.T
	kind      spout.Kind
	faults    bool
	off       *atomic.Bool
	src       *spouttest.Source
	r         *rig
	tasks     int
	inFlight  int
	committed txn.TxID
	nextN     map[txn.TxID]uint32
	flights   []*flight
	log       map[spout.Partition][]rec
	frozen    map[txn.TxID][]rec // content when its commit began
	first     map[txn.TxID][]rec // transactional: first complete emission
	names     []string           // partition names not used yet
}

func newModel(t *rapid.T, kind spout.Kind, faults bool) *model {
	m := &model{
		t: t, kind: kind, faults: faults, off: new(atomic.Bool),
		tasks:    rapid.IntRange(1, 3).Draw(t, "tasks"),
		inFlight: rapid.IntRange(1, 3).Draw(t, "inFlight"),
		nextN:    map[txn.TxID]uint32{},
		log:      map[spout.Partition][]rec{},
		frozen:   map[txn.TxID][]rec{},
		first:    map[txn.TxID][]rec{},
	}
	m.src = spouttest.NewSource()
	// Partitions join anywhere in the sorted order, so that a new one
	// moves others between tasks.
	m.names = rapid.Permutation([]string{"a", "b", "c", "d", "e", "f"}).Draw(t, "names")
	for range rapid.IntRange(1, 3).Draw(t, "partitions") {
		m.addPartition()
	}
	m.src.SetMaxBatch(rapid.IntRange(0, 3).Draw(t, "maxBatch"))
	var store coordstore.Store = ownedStore()
	if faults {
		inj := faultstore.Random(rapid.Uint64().Draw(t, "seed"), 0.1)
		store = faultstore.Wrap(store, faultstore.InjectorFunc(func(op faultstore.Op) faultstore.Fault {
			if m.off.Load() {
				return faultstore.Fault{}
			}
			return inj.Inject(op)
		}))
	}
	m.r = newRig(t, kind, store, m.src, m.tasks)
	return m
}

func (m *model) addPartition() {
	if len(m.names) > 0 {
		m.src.AddPartition(spout.Partition(m.names[0]))
		m.names = m.names[1:]
	}
}

// check accepts err only as an injected retryable store fault.
func (m *model) check(what string, err error) {
	m.t.Helper()
	if !m.faults {
		m.t.Fatalf("%s: %v", what, err)
	}
	if !errors.Is(err, faultstore.ErrInjected) || !failure.IsRetryable(err) {
		m.t.Fatalf("%s: %v (%s), want a retryable injected fault", what, err, failure.KindOf(err))
	}
}

// discard drops flights[i:], as a failure of flights[i] does.
func (m *model) discard(i int) { m.flights = m.flights[:i] }

func (m *model) partitions() []spout.Partition {
	ps, _ := m.src.Partitions(context.Background())
	return ps
}

func (m *model) append(t *rapid.T) {
	p := rapid.SampledFrom(m.partitions()).Draw(t, "p")
	fill(m.src, p, rapid.IntRange(1, 3).Draw(t, "n"))
}

func (m *model) begin(t *rapid.T) {
	if len(m.flights) >= m.inFlight {
		return
	}
	txid := m.committed + txn.TxID(len(m.flights)) + 1
	a := at(txid, m.nextN[txid])
	m.nextN[txid]++
	b, err := m.r.alloc.Begin(context.Background(), a)
	if err != nil {
		m.check("begin "+a.String(), err)
		return
	}
	m.flights = append(m.flights, &flight{a: a, b: b, emitted: make([]bool, m.tasks), tuples: make([][]rec, m.tasks)})
}

// emitBy has task emit the first batch in flight it has not emitted, and
// reports whether there was one.
func (m *model) emitBy(t *rapid.T, task int) bool {
	i := slices.IndexFunc(m.flights, func(f *flight) bool { return !f.emitted[task] })
	if i < 0 {
		return false
	}
	f := m.flights[i]
	var c spouttest.Collector
	if err := m.r.execs[task].EmitBatch(context.Background(), f.b, &c); err != nil {
		// The failure reaches the batch coordinator later; meanwhile
		// the tasks go on with the next batches.
		m.check(fmt.Sprintf("task %d emit %s", task, f.a), err)
		f.emitted[task], f.failed = true, true
		return true
	}
	f.emitted[task], f.tuples[task] = true, c.Records()
	if f.failed || !f.complete() {
		return true
	}
	got := f.content()
	if want, ok := m.frozen[f.a.TxID]; ok && !slices.Equal(got, want) {
		t.Fatalf("replay %s of a batch that began its commit emitted %s, want %s", f.a, fmtRecs(got), fmtRecs(want))
	}
	if m.kind == spout.Transactional && !m.faults {
		if want, ok := m.first[f.a.TxID]; ok && !slices.Equal(got, want) {
			t.Fatalf("transactional replay %s emitted %s, want %s", f.a, fmtRecs(got), fmtRecs(want))
		}
		m.first[f.a.TxID] = got
	}
	return true
}

// advance moves one task on: it emits its next batch in flight, beginning
// a new one if it has emitted them all. Tasks move independently, so some
// lag behind others.
func (m *model) advance(t *rapid.T) {
	task := rapid.IntRange(0, m.tasks-1).Draw(t, "task")
	if !m.emitBy(t, task) {
		m.begin(t)
		m.emitBy(t, task)
	}
}

func (m *model) fail(t *rapid.T) {
	if len(m.flights) > 0 {
		m.discard(rapid.IntRange(0, len(m.flights)-1).Draw(t, "i"))
	}
}

// commit runs the commit phase of the lowest batch; the state write may
// fail after writing part of the keys.
func (m *model) commit(t *rapid.T, stateFails bool) {
	if len(m.flights) == 0 {
		return
	}
	// Lagging tasks catch up with the lowest batch first.
	for task := range m.tasks {
		if len(m.flights) > 0 && !m.flights[0].emitted[task] {
			m.emitBy(t, task)
		}
	}
	if len(m.flights) == 0 {
		return
	}
	f := m.flights[0]
	if f.failed || !f.complete() {
		m.discard(0) // the batch coordinator heard of the failure
		return
	}
	if err := m.r.tryBeginCommit(f.a); err != nil {
		m.check("begin commit "+f.a.String(), err)
		m.discard(0)
		return
	}
	got := f.content()
	m.frozen[f.a.TxID] = got
	if stateFails {
		m.discard(0)
		return
	}
	for _, r := range got {
		m.log[r.Partition] = append(m.log[r.Partition], r)
	}
	m.committed = f.a.TxID
	m.flights = m.flights[1:]
	delete(m.frozen, f.a.TxID)
	delete(m.first, f.a.TxID)
	if err := m.r.trySuccess(f.a.TxID); err != nil {
		m.check("success "+f.a.String(), err)
	}
}

func (m *model) restart(t *rapid.T) {
	m.tasks = rapid.IntRange(1, 3).Draw(t, "tasks")
	m.r.restart(m.tasks)
	m.flights = nil
}

// invariant: the committed records of each partition are its records
// from offset 0, in order, once each.
func (m *model) invariant(t *rapid.T) {
	for p, got := range m.log {
		all := m.src.Records(p)
		if len(got) > len(all) || !slices.Equal(got, all[:len(got)]) {
			t.Fatalf("partition %s committed %s, want a prefix of %s", p, fmtRecs(got), fmtRecs(all))
		}
	}
}

// drain stops faults and runs batches one at a time until everything the
// source holds is committed.
func (m *model) drain(t *rapid.T) {
	m.off.Store(true)
	m.flights = nil
	m.src.SetMaxBatch(0)
	for range 5 {
		m.begin(t)
		m.commit(t, false)
	}
	for _, p := range m.partitions() {
		if n := len(m.log[p]); int64(n) != m.src.End(p) {
			t.Fatalf("partition %s: %d of %d records committed after draining", p, n, m.src.End(p))
		}
	}
}

// actions, repeated by weight.
var actions = []string{
	"append", "append", "addPartition", "batchSize",
	"advance", "advance", "advance", "advance", "advance",
	"fail", "commit", "commit", "commit", "commitFails", "restart",
}

func runModel(t *rapid.T, kind spout.Kind, faults bool) *model {
	m := newModel(t, kind, faults)
	steps := rapid.IntRange(20, 300).Draw(t, "steps")
	for range steps {
		switch rapid.SampledFrom(actions).Draw(t, "action") {
		case "append":
			m.append(t)
		case "addPartition":
			m.addPartition()
		case "batchSize":
			m.src.SetMaxBatch(rapid.IntRange(0, 3).Draw(t, "maxBatch"))
		case "advance":
			m.advance(t)
		case "fail":
			m.fail(t)
		case "commit":
			m.commit(t, false)
		case "commitFails":
			m.commit(t, true)
		case "restart":
			m.restart(t)
		}
		m.invariant(t)
	}
	m.drain(t)
	return m
}

// TestModel is the property test of both partitioned flavours, with and
// without random store faults.
func TestModel(t *testing.T) {
	for _, kind := range both {
		for _, faults := range []bool{false, true} {
			name := kind.String()
			if faults {
				name += "/faults"
			}
			t.Run(name, func(t *testing.T) {
				var commits, records int
				rapid.Check(t, func(t *rapid.T) {
					m := runModel(t, kind, faults)
					commits += int(m.committed)
					for _, l := range m.log {
						records += len(l)
					}
				})
				t.Logf("%d batches and %d records committed", commits, records)
			})
		}
	}
}
