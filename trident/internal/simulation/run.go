package simulation

import (
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"

	"github.com/squallstream/squall/acker"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/opaque"
	"github.com/squallstream/squall/state/transactional"
	"github.com/squallstream/squall/txn"
)

// Stats counts what happened in a run.
type Stats struct {
	Steps       int      // messages delivered or lost, ticks and crashes
	Delivered   int      // messages delivered
	Lost        int      // messages lost
	Ticks       int      // virtual ticks
	Crashes     int      // worker crashes
	Faults      int      // injected spout, operation and state failures
	Attempts    int      // batch attempts emitted
	FailedTrees int      // batch, freeze and commit trees that failed or timed out
	Mismatches  int      // attempts whose tuple counts did not add up
	Committed   txn.TxID // the last committed txid
}

// Result is the outcome of a run.
type Result struct {
	Stats
	Want, Got map[string]int64 // the oracle's counts and the committed ones
	Trace     uint64           // a hash of every event, in order: equal for equal runs
	Last      []string         // the last events, for a failure report
}

// Run runs the simulation of opt.Seed until every record is counted and
// three more batches committed, or MaxSteps. It returns an error if the
// counts differ from the oracle, the run stalled, or a component failed
// in a way the runtime would not survive.
func Run(opt Options) (Result, error) {
	opt = opt.withDefaults()
	w, err := newWorld(opt)
	if err != nil {
		return Result{}, err
	}
	res, err := w.run()
	res.Stats, res.Want, res.Trace, res.Last = w.stats, w.want, w.events.sum, w.events.last()
	if err != nil {
		return res, fmt.Errorf("seed %d (%s, %d in flight): %w\nlast events:\n  %s", opt.Seed, opt.Flavour, w.inFlight, err, strings.Join(res.Last, "\n  "))
	}
	return res, nil
}

func (w *world) run() (Result, error) {
	var res Result
	var doneAt txn.TxID // the committed txid when every record was counted
	for w.stats.Steps < w.opt.MaxSteps {
		w.stats.Steps++
		if err := w.step(); err != nil {
			return res, err
		}
		if w.stats.Committed == 0 || (doneAt != 0 && w.stats.Committed < doneAt+3) {
			continue
		}
		got, err := w.committedCounts()
		if err != nil {
			return res, err
		}
		res.Got = got
		if doneAt != 0 {
			return res, w.check(got)
		}
		if counted(got, w.want) {
			doneAt = w.stats.Committed
			if err := w.check(got); err != nil {
				return res, err
			}
		}
	}
	return res, fmt.Errorf("stalled: %d steps, committed txid %d, counts %v, want %v", w.stats.Steps, w.stats.Committed, res.Got, w.want)
}

// step delivers or loses one message, passes a tick, or crashes the worker.
func (w *world) step() error {
	if w.stats.Crashes < w.opt.MaxCrashes && w.rng.IntN(w.opt.CrashEvery) == 0 {
		return w.crash()
	}
	from, to, ok := w.net.pick(w.rng)
	if !ok || w.rng.IntN(20) == 0 {
		return w.tick()
	}
	m := w.net.pop(from, to)
	if w.chance(w.opt.Drop) {
		w.stats.Lost++
		w.events.add(fmt.Sprintf("lost %d->%d %s %v", from, to, m.kind, m.attempt))
		return nil
	}
	w.stats.Delivered++
	w.events.add(fmt.Sprintf("%d->%d %s %v", from, to, m.kind, m.attempt))
	switch {
	case to == masterNode:
		return w.master.outcome(m.outcome)
	case to == ackerNode:
		return w.acker(m)
	case int(to) < 2+sourceTasks:
		return w.sources[to-2].handle(m)
	default:
		return w.counters[int(to)-2-sourceTasks].handle(m)
	}
}

// acker applies an acker message to the tracker and tells the master of
// finished trees.
func (w *world) acker(m message) error {
	var o acker.Outcome
	switch m.kind {
	case mInit:
		o = w.tracker.Init(m.tup.root, m.tup.edge, 0)
	case mAck:
		o = w.tracker.Ack(m.tup.root, m.tup.edge)
	case mFail:
		o = w.tracker.Fail(m.tup.root)
	default:
		return fmt.Errorf("acker got a %s message", m.kind)
	}
	if o.Status.Done() {
		w.net.send(ackerNode, masterNode, message{kind: mOutcome, outcome: o})
	}
	return nil
}

// tick passes a tick: the coordinator may emit, and every ackerTickEvery
// ticks the acker times out trees.
func (w *world) tick() error {
	w.stats.Ticks++
	w.events.add("tick")
	if w.stats.Ticks%ackerTickEvery == 0 {
		w.tracker.Tick(func(o acker.Outcome) {
			w.net.send(ackerNode, masterNode, message{kind: mOutcome, outcome: o})
		})
	}
	return w.master.tick()
}

// committedCounts reads every word's count as of the last committed txid.
// Transactional state keeps no earlier value: it is read as stored, which
// may include a batch written but not yet committed, whose replay writes
// exactly the same.
func (w *world) committedCounts() (map[string]int64, error) {
	got := map[string]int64{}
	keys := make([]state.Key, len(words))
	for i, word := range words {
		keys[i] = state.MustKey(word)
	}
	for _, mem := range w.memories {
		var es []state.Entry[int64]
		var err error
		if w.opt.Flavour == Transactional {
			es, err = transactional.New(mem, state.MapOptions[int64]{}).MultiGet(w.ctx, keys)
		} else {
			es, err = opaque.New(mem, state.MapOptions[int64]{}).MultiGetCommitted(w.ctx, w.stats.Committed, keys)
		}
		if err != nil {
			return nil, err
		}
		for i, e := range es {
			if e.Found {
				got[words[i]] += e.Val
			}
		}
	}
	return got, nil
}

// counted reports whether got has reached want for every word.
func counted(got, want map[string]int64) bool {
	for w, n := range want {
		if got[w] < n {
			return false
		}
	}
	return true
}

// check compares got with the oracle exactly.
func (w *world) check(got map[string]int64) error {
	for _, word := range slices.Sorted(maps.Keys(w.want)) {
		if got[word] != w.want[word] {
			return fmt.Errorf("%q counted %d times, want %d (committed txid %d; counts %v, want %v)",
				word, got[word], w.want[word], w.stats.Committed, got, w.want)
		}
	}
	return nil
}

// eventLog hashes every event of a run and keeps the last few.
type eventLog struct {
	sum  uint64
	ring [40]string
	n    int
}

func (l *eventLog) add(e string) {
	h := fnv.New64a()
	h.Write([]byte(e))
	l.sum = l.sum*1099511628211 ^ h.Sum64()
	l.ring[l.n%len(l.ring)] = e
	l.n++
}

func (l *eventLog) last() []string {
	var out []string
	for i := max(0, l.n-len(l.ring)); i < l.n; i++ {
		out = append(out, l.ring[i%len(l.ring)])
	}
	return out
}
