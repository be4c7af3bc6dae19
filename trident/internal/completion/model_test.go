package completion

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/squallstream/squall/txn"
	"pgregory.net/rapid"
)

// model is a direct transcription of the bookkeeping the stage bolt did
// before this package existed (its batch records, track, abandon, release,
// coordinate, checkEarly, commitBatch, checkFinish and failBatch), with
// handles for tuples and actions for the bolt's calls. Only success
// differs: it forgets records in txid order where the bolt ranged over a
// map. The property test checks that Machine's actions equal the model's
// after every input.
type model struct {
	cfg             Config
	expectedReports int
	earlyReports    int
	lateFrom        map[string]bool
	committer       bool
	batches         map[txn.TxID]*mbatch
	finished        map[txn.TxID]uint32
	out             []Action[int]
}

type mbatch struct {
	attempt  txn.Attempt
	received int
	expected int
	reports  int
	held     *int
	commit   *int
	early    struct {
		reports, expected, received int
		held                        *int
	}
	failed bool
}

func newModel(cfg Config) *model {
	m := &model{cfg: cfg, expectedReports: cfg.Reports, earlyReports: cfg.EarlyReports, lateFrom: map[string]bool{},
		committer: cfg.Committer, batches: map[txn.TxID]*mbatch{}, finished: map[txn.TxID]uint32{}}
	for _, c := range cfg.Late {
		m.lateFrom[c] = true
	}
	return m
}

func (m *model) ack(h int)  { m.out = append(m.out, Action[int]{Kind: Ack, Handle: h}) }
func (m *model) fail(h int) { m.out = append(m.out, Action[int]{Kind: Fail, Handle: h}) }

func (m *model) track(a txn.Attempt) *mbatch {
	if n, ok := m.finished[a.TxID]; ok && a.N <= n {
		return nil
	}
	bt := m.batches[a.TxID]
	switch {
	case bt != nil && bt.attempt.N == a.N:
		return bt
	case bt != nil && bt.attempt.N > a.N:
		return nil
	case bt != nil:
		m.abandon(bt)
	}
	bt = &mbatch{attempt: a}
	m.batches[a.TxID] = bt
	return bt
}

func (m *model) abandon(bt *mbatch) {
	m.release(bt)
	delete(m.batches, bt.attempt.TxID)
	m.out = append(m.out, Action[int]{Kind: Drop, Attempt: bt.attempt})
}

func (m *model) release(bt *mbatch) {
	for _, t := range []**int{&bt.held, &bt.early.held, &bt.commit} {
		if *t != nil {
			m.fail(**t)
			*t = nil
		}
	}
}

func (m *model) data(a txn.Attempt, early bool) bool {
	bt := m.track(a)
	if bt == nil || bt.failed {
		return false
	}
	bt.received++
	if early {
		bt.early.received++
	}
	return true
}

func (m *model) opFailed(a txn.Attempt) {
	if bt := m.batches[a.TxID]; bt != nil && bt.attempt == a {
		m.failBatch(bt)
	}
}

func (m *model) coordinate(a txn.Attempt, from string, count, t int) {
	bt := m.track(a)
	if bt == nil {
		m.ack(t)
		return
	}
	bt.reports++
	bt.expected += count
	mixed := len(m.lateFrom) > 0 && m.earlyReports > 0
	switch {
	case m.committer:
		m.ack(t)
	case mixed && !m.lateFrom[from]:
		bt.early.reports++
		bt.early.expected += count
		if bt.early.held == nil {
			bt.early.held = &t
		} else {
			m.ack(t)
		}
		if !m.checkEarly(bt) {
			return
		}
	case bt.held == nil:
		bt.held = &t
	default:
		m.ack(t)
	}
	m.checkFinish(bt)
}

func (m *model) checkEarly(bt *mbatch) bool {
	e := &bt.early
	if bt.failed {
		m.release(bt)
		return false
	}
	if e.held == nil || e.reports < m.earlyReports {
		return true
	}
	if e.received != e.expected {
		m.out = append(m.out, Action[int]{Kind: Mismatch, Attempt: bt.attempt, Early: true, Expected: e.expected, Arrived: e.received})
		m.failBatch(bt)
		return false
	}
	m.ack(*e.held)
	e.held = nil
	return true
}

func (m *model) commitBatch(a txn.Attempt, t int) {
	bt := m.batches[a.TxID]
	if len(m.lateFrom) > 0 && (bt == nil || bt.attempt.N < a.N) {
		bt = m.track(a)
	}
	if bt == nil || bt.attempt.N != a.N {
		m.out = append(m.out, Action[int]{Kind: Unprocessed, Attempt: a})
		m.fail(t)
		return
	}
	bt.commit = &t
	m.checkFinish(bt)
}

func (m *model) checkFinish(bt *mbatch) {
	if bt.failed {
		m.release(bt)
		return
	}
	if bt.reports < m.expectedReports {
		return
	}
	if bt.received != bt.expected {
		m.out = append(m.out, Action[int]{Kind: Mismatch, Attempt: bt.attempt, Expected: bt.expected, Arrived: bt.received})
		m.failBatch(bt)
		return
	}
	if m.committer && bt.commit == nil {
		return
	}
	anchor := bt.held
	if m.committer {
		anchor = bt.commit
	}

	m.out = append(m.out, Action[int]{Kind: Finish, Attempt: bt.attempt, Handle: *anchor})
}

// finished is the rest of checkFinish, after the bolt's finish step.
func (m *model) finishedStep(a txn.Attempt, err error) {
	bt := m.batches[a.TxID]

	if err != nil {
		m.failBatch(bt)
		return
	}
	anchor := &bt.held
	if m.committer {
		anchor = &bt.commit
	}
	delete(m.batches, a.TxID)
	m.finished[a.TxID] = a.N
	m.ack(**anchor)
	m.out = append(m.out, Action[int]{Kind: Drop, Attempt: a})
}

func (m *model) failBatch(bt *mbatch) {
	bt.failed = true
	m.release(bt)
}

func (m *model) success(txid txn.TxID) {
	var ts []txn.TxID
	for t := range m.batches {
		if t <= txid {
			ts = append(ts, t)
		}
	}
	slices.Sort(ts)
	for _, t := range ts {
		m.abandon(m.batches[t])
	}
	for t := range m.finished {
		if t <= txid {
			delete(m.finished, t)
		}
	}
}

// upstreamTask is one upstream task of the tested stage.
type upstreamTask struct {
	component string
	late      bool
}

func TestModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var tasks []upstreamTask
		cfg := Config{Committer: rapid.Bool().Draw(t, "committer")}
		for i := range rapid.IntRange(0, 2).Draw(t, "early components") {
			for range rapid.IntRange(1, 2).Draw(t, "tasks") {
				tasks = append(tasks, upstreamTask{component: fmt.Sprint("e", i)})
			}
		}
		cfg.EarlyReports = len(tasks)
		if len(tasks) == 0 || rapid.Bool().Draw(t, "late") {
			cfg.Late = []string{"p"}
			for range rapid.IntRange(1, 2).Draw(t, "late tasks") {
				tasks = append(tasks, upstreamTask{component: "p", late: true})
			}
		}
		cfg.Reports = len(tasks)
		mach, err := New[int](cfg)
		if err != nil {
			t.Fatal(err)
		}
		mod := newModel(cfg)
		h := newHarness(cfg)

		// step runs one input on both and compares their actions, running
		// the final step of every Finish (failing it when finishErr).
		step := func(name string, in func(), min func()) {
			in()
			min()
			var got []Action[int]
			for {
				act, ok := mach.Next()
				if !ok {
					break
				}
				got = append(got, act)
				h.exec(t, mach, act)
				if act.Kind == Finish {
					var err error
					if rapid.IntRange(0, 5).Draw(t, "finishFails") == 0 {
						err = errors.New("final step failed")
					}
					mach.Finished(act.Attempt, err)
					mod.finishedStep(act.Attempt, err)
				}
			}
			want := mod.out
			mod.out = nil
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%s:\n got %v\nwant %v", name, got, want)
			}
		}
		attempt := func(t *rapid.T) txn.Attempt {
			return txn.Attempt{
				TxID: h.success + txn.TxID(rapid.IntRange(1, 3).Draw(t, "txid")),
				N:    uint32(rapid.IntRange(0, 2).Draw(t, "n")),
			}
		}

		t.Repeat(map[string]func(*rapid.T){
			"data": func(t *rapid.T) {
				a, i := attempt(t), rapid.IntRange(0, len(tasks)-1).Draw(t, "task")
				if h.reported[key{a, i}] && rapid.IntRange(0, 9).Draw(t, "overtake") > 0 {
					t.Skip("a report never overtakes its tuples")
				}
				opFails := rapid.IntRange(0, 9).Draw(t, "opFails") == 0
				var got, want bool
				step("data "+a.String(), func() {
					if got = mach.Data(a, !tasks[i].late); got {
						h.processed[a]++
						if opFails {
							mach.Fail(a, errors.New("operation failed"))
						}
					}
				}, func() {
					if want = mod.data(a, !tasks[i].late); want && opFails {
						mod.opFailed(a)
					}
				})
				if got != want {
					t.Fatalf("data %v: processed %v, model %v", a, got, want)
				}
				h.sent[key{a, i}]++
			},
			"report": func(t *rapid.T) {
				a, i := attempt(t), rapid.IntRange(0, len(tasks)-1).Draw(t, "task")
				if h.reported[key{a, i}] {
					t.Skip("a task reports once per attempt")
				}
				count := h.sent[key{a, i}]
				if rapid.IntRange(0, 9).Draw(t, "miscount") == 0 {
					count += rapid.IntRange(-1, 1).Draw(t, "by")
				}
				hd := h.give(a)
				h.reported[key{a, i}] = true
				h.reports[a]++
				h.counted[a] += count
				step("report "+a.String(), func() { mach.Report(a, tasks[i].component, count, hd) },
					func() { mod.coordinate(a, tasks[i].component, count, hd) })
			},
			"commit": func(t *rapid.T) {
				a := attempt(t)
				if !cfg.Committer || h.commits[a] {
					t.Skip("committers get one commit per attempt")
				}
				hd := h.give(a)
				h.commits[a] = true
				step("commit "+a.String(), func() { mach.Commit(a, hd) }, func() { mod.commitBatch(a, hd) })
			},
			"success": func(t *rapid.T) {
				tx := h.success + txn.TxID(rapid.IntRange(0, 2).Draw(t, "txid"))
				step("success "+tx.String(), func() { mach.Success(tx) }, func() { mod.success(tx) })
				h.success = tx
				h.checkForgotten(t, mach)
			},
		})

		// Every handle is settled once everything committed.
		tx := h.success + 3
		step("final success", func() { mach.Success(tx) }, func() { mod.success(tx) })
		h.checkForgotten(t, mach)
		if mach.Len() != 0 {
			t.Fatalf("%d txids remembered after the success of all", mach.Len())
		}
		for hd, a := range h.owner {
			if h.settled[hd] != 1 {
				t.Fatalf("handle %d of %v settled %d times", hd, a, h.settled[hd])
			}
		}
	})
}

type key struct {
	a    txn.Attempt
	task int
}

// harness plays the shell and checks the machine's invariants.
type harness struct {
	cfg       Config
	next      int
	owner     map[int]txn.Attempt // every handle given to the machine
	settled   map[int]int
	sent      map[key]int
	reported  map[key]bool
	reports   map[txn.Attempt]int
	counted   map[txn.Attempt]int // the sum of the reported counts
	processed map[txn.Attempt]int // data the machine let through
	commits   map[txn.Attempt]bool
	finishes  map[txn.Attempt]bool
	success   txn.TxID
}

func newHarness(cfg Config) *harness {
	return &harness{cfg: cfg, owner: map[int]txn.Attempt{}, settled: map[int]int{}, sent: map[key]int{}, reported: map[key]bool{},
		reports: map[txn.Attempt]int{}, counted: map[txn.Attempt]int{}, processed: map[txn.Attempt]int{}, commits: map[txn.Attempt]bool{}, finishes: map[txn.Attempt]bool{}}
}

func (h *harness) give(a txn.Attempt) int {
	h.next++
	h.owner[h.next] = a
	return h.next
}

func (h *harness) exec(t *rapid.T, m *Machine[int], act Action[int]) {
	switch act.Kind {
	case Ack, Fail:
		if _, ok := h.owner[act.Handle]; !ok {
			t.Fatalf("%v: a handle the machine was never given", act)
		}
		if h.settled[act.Handle]++; h.settled[act.Handle] > 1 {
			t.Fatalf("%v: handle settled twice", act)
		}
	case Finish:
		a := act.Attempt
		if h.finishes[a] {
			t.Fatalf("%v: finished twice", act)
		}
		h.finishes[a] = true
		if h.reports[a] != h.cfg.Reports || h.processed[a] != h.counted[a] {
			t.Fatalf("%v: finished with %d of %d reports, %d of %d tuples", act, h.reports[a], h.cfg.Reports, h.processed[a], h.counted[a])
		}
		if h.cfg.Committer && !h.commits[a] {
			t.Fatalf("%v: a committer finished without its commit", act)
		}
		if h.owner[act.Handle] != a || h.settled[act.Handle] != 0 {
			t.Fatalf("%v: the anchor is not a held handle of the attempt", act)
		}
		if _, p := m.Status(a.TxID); p != Finishing {
			t.Fatalf("%v: phase %v", act, p)
		}
	}
}

// checkForgotten checks that nothing up to the last success is
// remembered.
func (h *harness) checkForgotten(t *rapid.T, m *Machine[int]) {
	for tx := txn.TxID(1); tx <= h.success; tx++ {
		if a, p := m.Status(tx); p != 0 {
			t.Fatalf("attempt %v (%v) remembered after the success of %v", a, p, h.success)
		}
	}
	for hd, a := range h.owner {
		if a.TxID <= h.success && h.settled[hd] != 1 {
			t.Fatalf("handle %d of %v settled %d times after the success of %v", hd, a, h.settled[hd], h.success)
		}
	}
}
