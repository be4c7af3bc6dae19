package simulation

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"

	"github.com/squallstream/squall/acker"
	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/statetest"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/internal/coord"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/trident/spout/spouttest"
	"github.com/squallstream/squall/txn"
)

// The simulated topology's shape.
const (
	sourceTasks  = 2
	counterTasks = 2
	owner        = "simulation"
	stream       = "words"
	sourceName   = "source" // the upstream component of the counting tasks
	// ackerTickEvery is the ticks between two rotations of the acker's
	// timeout buckets: a tree times out after 10 to 20 ticks.
	ackerTickEvery = 10
)

var (
	partitions = []spout.Partition{"p0", "p1", "p2"}
	words      = []string{"ant", "bee", "cat", "dog", "eel", "fox"}
	errFlaky   = errors.New("simulation: injected fault")
	errTree    = errors.New("simulation: tree failed")
	errCrash   = errors.New("simulation: worker crash")
)

// world is one run: the durable part, which survives crashes, and the
// worker, which a crash replaces.
type world struct {
	opt Options
	rng *rand.Rand
	ctx context.Context
	net *network

	// durable
	store     coordstore.Store
	fence     coordstore.Fence
	persisted coord.State
	src       *spouttest.Source
	memories  []*state.Memory // one per counting task
	want      map[string]int64

	// the worker
	master   *master
	tracker  *acker.Tracker
	sources  []*sourceTask
	counters []*counter

	inFlight int // the run's MaxBatchesInFlight
	ids      uint64
	events   eventLog
	stats    Stats
}

// newWorld builds the durable part from the seed and starts a worker.
func newWorld(opt Options) (*world, error) {
	w := &world{opt: opt, rng: rand.New(rand.NewPCG(opt.Seed, 0x5eed)), ctx: context.Background(),
		net: newNetwork(2 + sourceTasks + counterTasks), want: map[string]int64{}}
	w.inFlight = 1 + w.rng.IntN(3)
	w.src = spouttest.NewSource(partitions...)
	for _, p := range partitions {
		for range opt.Records {
			word := words[w.rng.IntN(len(words))]
			w.src.Append(p, word)
			w.want[word]++
		}
	}
	if opt.Flavour == Opaque {
		// Replays read more or fewer records than the attempt before.
		w.src.SetLimit(func(a txn.Attempt, _ spout.Partition) int { return 1 + int((uint64(a.N)*7+uint64(a.TxID))%5) })
	} else {
		w.src.SetMaxBatch(3)
	}
	w.src.SetFault(func(spouttest.Call) error {
		if w.chance(w.opt.ReadFail) {
			w.stats.Faults++
			return failure.Retryable(errFlaky)
		}
		return nil
	})
	for i := range counterTasks {
		w.memories = append(w.memories, state.NewMemory(fmt.Sprint("counts-", i)))
	}
	w.store = coordstore.NewMemory()
	gen, err := w.store.Acquire(w.ctx, owner)
	if err != nil {
		return nil, err
	}
	w.fence = coordstore.Fence{Owner: owner, Generation: gen}
	return w, w.startWorker(nil)
}

// startWorker starts a worker: after a crash (cause non-nil), every task
// and the acker start empty and the master's coordinator resumes from its
// persisted state.
func (w *world) startWorker(cause error) error {
	c, err := coord.New(coord.Config{MaxBatchesInFlight: w.inFlight, EmitInterval: 1,
		RetryBackoff: 1, MaxRetryBackoff: 8, Seed: w.opt.Seed}, w.persisted)
	if err != nil {
		return err
	}
	if cause != nil {
		if err := c.Restarted(cause); err != nil {
			return err
		}
	}
	kind := spout.Opaque
	if w.opt.Flavour == Transactional {
		kind = spout.Transactional
	}
	sc, err := spout.NewAllocator(spout.AllocatorConfig{Kind: kind, Store: w.store, Stream: stream, Fence: w.fence, Partitions: w.src.Lister()})
	if err != nil {
		return err
	}
	w.master = &master{w: w, c: c, spout: sc, trees: map[acker.RootID]tree{}}
	if w.tracker, err = acker.New(acker.Config{}); err != nil {
		return err
	}
	w.sources = w.sources[:0]
	for i := range sourceTasks {
		t, err := newSourceTask(w, i, kind)
		if err != nil {
			return err
		}
		w.sources = append(w.sources, t)
	}
	w.counters = w.counters[:0]
	for i := range counterTasks {
		t, err := newCounter(w, i)
		if err != nil {
			return err
		}
		w.counters = append(w.counters, t)
	}
	c.SetSpoutReady(true)
	return w.master.run()
}

// crash loses the worker and every message in flight.
func (w *world) crash() error {
	w.stats.Crashes++
	w.events.add("crash")
	w.net.clear()
	for _, s := range w.sources {
		s.ex.Close()
	}
	w.master.spout.Close()
	return w.startWorker(errCrash)
}

func (w *world) chance(p float64) bool { return w.rng.Float64() < p }

// newID returns a fresh root or edge id (never zero, so an edge id never
// cancels out by accident).
func (w *world) newID() uint64 {
	w.ids++
	return w.ids*0x9e3779b97f4a7c15 | 1
}

func sourceNode(i int) node  { return node(2 + i) }
func counterNode(i int) node { return node(2 + sourceTasks + i) }

// counterOf is the counting task that counts word, as PartitionBy routes.
func counterOf(word string) int {
	h := fnv.New32a()
	h.Write([]byte(word))
	return int(h.Sum32() % counterTasks)
}

// emitTree sends a tracked message to each of the nodes, as the children
// of a new root the master tracks as tree t.
func (w *world) emitTree(t tree, to []node, m message) {
	root := acker.RootID(w.newID())
	var xor uint64
	for _, n := range to {
		edge := w.newID()
		xor ^= edge
		m.tup = tuple{root: root, edge: edge}
		w.net.send(masterNode, n, m)
	}
	w.master.trees[root] = t
	w.net.send(masterNode, ackerNode, message{kind: mInit, tup: tuple{root: root, edge: xor}})
}

// ack acks tup from node from, with the edges of the tuples anchored to it.
func (w *world) ack(from node, tup tuple, children ...uint64) {
	xor := tup.edge
	for _, e := range children {
		xor ^= e
	}
	w.net.send(from, ackerNode, message{kind: mAck, tup: tuple{root: tup.root, edge: xor}})
}

func (w *world) fail(from node, tup tuple) {
	w.net.send(from, ackerNode, message{kind: mFail, tup: tup})
}

func allSources() []node {
	ns := make([]node, sourceTasks)
	for i := range ns {
		ns[i] = sourceNode(i)
	}
	return ns
}

func allCounters() []node {
	ns := make([]node, counterTasks)
	for i := range ns {
		ns[i] = counterNode(i)
	}
	return ns
}

// cloneState copies a coordinator state, as a store would.
func cloneState(st coord.State) coord.State {
	st.Attempts = slices.Clone(st.Attempts)
	st.Failures = slices.Clone(st.Failures)
	return st
}

// mapFaults is the fault rule of the counting tasks' backing maps.
func (w *world) mapFaults(op statetest.Op, _ int, keys []state.Key) statetest.Fault {
	switch {
	case op == statetest.OpGet && w.chance(w.opt.WriteFail/4):
		w.stats.Faults++
		return statetest.Retryable(0)
	case op == statetest.OpPut && w.chance(w.opt.WriteFail):
		w.stats.Faults++
		return statetest.Retryable(len(keys) / 2)
	}
	return statetest.Fault{}
}
