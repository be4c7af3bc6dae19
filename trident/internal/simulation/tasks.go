package simulation

import (
	"fmt"
	"slices"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/opaque"
	"github.com/squallstream/squall/state/statetest"
	"github.com/squallstream/squall/state/transactional"
	"github.com/squallstream/squall/trident/internal/completion"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/trident/spout/spouttest"
	"github.com/squallstream/squall/txn"
)

// sourceTask is one task of the source: it emits its share of each batch
// through the real executor, routes each word to its counting task and
// reports the counts, anchored to the batch tuple.
type sourceTask struct {
	w    *world
	node node
	ex   spout.Executor
}

func newSourceTask(w *world, i int, kind spout.Kind) (*sourceTask, error) {
	cfg := spout.ExecutorConfig[spouttest.Offsets]{Store: w.store, Stream: stream, Fence: w.fence,
		Task: i, NumTasks: sourceTasks, Emitter: w.src.Emitter()}
	var ex spout.Executor
	var err error
	if kind == spout.Transactional {
		ex, err = spout.NewTransactional(cfg)
	} else {
		ex, err = spout.NewOpaque(cfg)
	}
	return &sourceTask{w: w, node: sourceNode(i), ex: ex}, err
}

// wordsOut is the collector of one batch: it sends each word to its counting
// task and counts what each was sent.
type wordsOut struct {
	t       *sourceTask
	attempt txn.Attempt
	sent    [counterTasks]int
}

func (c *wordsOut) Emit(values ...any) {
	word := values[2].(string)
	j := counterOf(word)
	c.sent[j]++
	c.t.w.net.send(c.t.node, counterNode(j), message{kind: mData, attempt: c.attempt, word: word})
}

func (c *wordsOut) ReportError(error) {}

func (t *sourceTask) handle(m message) error {
	w := t.w
	switch m.kind {
	case mBatch:
		out := &wordsOut{t: t, attempt: m.attempt}
		if ok, err := t.settle(m, t.ex.EmitBatch(w.ctx, m.batch, out)); !ok {
			return err
		}
		children := make([]uint64, counterTasks)
		for j := range children {
			children[j] = w.newID()
			w.net.send(t.node, counterNode(j), message{kind: mReport, attempt: m.attempt, count: out.sent[j],
				tup: tuple{root: m.tup.root, edge: children[j]}})
		}
		w.ack(t.node, m.tup, children...)
	case mFreeze:
		if ok, err := t.settle(m, t.ex.BeginCommit(w.ctx, m.attempt)); !ok {
			return err
		}
		w.ack(t.node, m.tup)
	case mSuccess:
		if err := t.ex.Success(w.ctx, m.txid); err != nil && !failure.IsRetryable(err) {
			return err
		}
	default:
		return fmt.Errorf("source task got a %s message", m.kind)
	}
	return nil
}

// settle reports whether the call that handled m succeeded. On a
// retryable error it fails m's tuple; any other error ends the run (the
// runtime would crash the worker on it, and nothing here raises one).
func (t *sourceTask) settle(m message, err error) (ok bool, _ error) {
	switch {
	case err == nil:
		return true, nil
	case !failure.IsRetryable(err):
		return false, fmt.Errorf("source %d: %s %v: %w", t.node, m.kind, m.attempt, err)
	}
	t.w.fail(t.node, m.tup)
	return false, nil
}

// counter is one counting task: the shell of a completion machine, as a
// committer group's bolt is. It counts the words of each batch and, at
// the batch's commit, adds the counts to map state.
type counter struct {
	w       *world
	node    node
	m       *completion.Machine[tuple]
	state   state.MapState[int64]
	batches map[txn.TxID]*counts
}

// counts is a counting task's data for one attempt at a batch.
type counts struct {
	attempt txn.Attempt
	words   map[string]int64
}

func newCounter(w *world, i int) (*counter, error) {
	m, err := completion.New[tuple](completion.Config{Reports: sourceTasks, EarlyReports: sourceTasks, Committer: true})
	if err != nil {
		return nil, err
	}
	backing := statetest.NewFaultMap[[]byte](w.memories[i], w.mapFaults)
	var st state.MapState[int64] = opaque.New(backing, state.MapOptions[int64]{})
	if w.opt.Flavour == Transactional {
		st = transactional.New(backing, state.MapOptions[int64]{})
	}
	return &counter{w: w, node: counterNode(i), m: m, state: st, batches: map[txn.TxID]*counts{}}, nil
}

func (c *counter) handle(m message) error {
	switch m.kind {
	case mData:
		if c.m.Data(m.attempt, true) {
			if err := c.drain(); err != nil {
				return err
			}
			if c.w.chance(c.w.opt.OpFail) {
				c.w.stats.Faults++
				c.m.Fail(m.attempt, failure.Retryable(errFlaky))
			} else {
				c.batch(m.attempt).words[m.word]++
			}
		}
	case mReport:
		c.m.Report(m.attempt, sourceName, m.count, m.tup)
	case mCommit:
		c.m.Commit(m.attempt, m.tup)
	case mSuccess:
		c.m.Success(m.txid)
	default:
		return fmt.Errorf("counting task got a %s message", m.kind)
	}
	return c.drain()
}

// drain executes the machine's actions, in order.
func (c *counter) drain() error {
	for {
		act, ok := c.m.Next()
		if !ok {
			return nil
		}
		switch act.Kind {
		case completion.Ack:
			c.w.ack(c.node, act.Handle)
		case completion.Fail:
			c.w.fail(c.node, act.Handle)
		case completion.Finish:
			err := c.commit(act.Attempt)
			if err != nil && !failure.IsRetryable(err) {
				return fmt.Errorf("counter %d: commit %v: %w", c.node, act.Attempt, err)
			}
			c.m.Finished(act.Attempt, err)
		case completion.Drop:
			if b := c.batches[act.Attempt.TxID]; b != nil && b.attempt == act.Attempt {
				delete(c.batches, act.Attempt.TxID)
			}
		case completion.Mismatch:
			c.w.stats.Mismatches++
		}
	}
}

func (c *counter) batch(a txn.Attempt) *counts {
	b := c.batches[a.TxID]
	if b == nil || b.attempt != a {
		b = &counts{attempt: a, words: map[string]int64{}}
		c.batches[a.TxID] = b
	}
	return b
}

// commit adds the batch's counts to state under its txid.
func (c *counter) commit(a txn.Attempt) error {
	ctx := c.w.ctx
	if err := c.state.BeginCommit(ctx, a.TxID); err != nil {
		return err
	}
	b := c.batch(a)
	ws := make([]string, 0, len(b.words))
	for w := range b.words {
		ws = append(ws, w)
	}
	slices.Sort(ws)
	keys := make([]state.Key, len(ws))
	ups := make([]state.ValueUpdater[int64], len(ws))
	for i, w := range ws {
		keys[i] = state.MustKey(w)
		n := b.words[w]
		ups[i] = state.ValueUpdaterFunc[int64](func(old int64, _ bool) int64 { return old + n })
	}
	if _, err := c.state.MultiUpdate(ctx, keys, ups); err != nil {
		return err
	}
	return c.state.Commit(ctx, a.TxID)
}
