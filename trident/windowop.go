package trident

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/squallstream/squall/trident/internal/exec"

	"github.com/squallstream/squall/internal/clock"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/trident/internal/window"
	"github.com/squallstream/squall/trident/windowstore"
	"github.com/squallstream/squall/txn"
)

// windowOp is the shell around the pure window core
// (trident/internal/window): a persister, so that it runs in the commit
// phase of each batch, in txid order, like PartitionPersist.
type windowOp[S any] struct {
	name    string
	spec    window.Spec
	store   WindowsStore
	agg     Aggregator[S]
	stored  []int   // positions of the group and input fields in the parent's tuple
	nGroup  int     // how many of stored are group fields
	inSch   *schema // the aggregator's input fields
	timeIdx int     // position of the event-time field; -1 if none
}

func (w *windowOp[S]) windowName() string { return w.name }

// Open opens the window task on the real clock; the processor opens it
// on the topology's (OpenClocked).
func (w *windowOp[S]) Open(ctx context.Context, partition, numPartitions int) (exec.PersistTask, error) {
	return w.OpenClocked(ctx, partition, numPartitions, clock.Real())
}

func (w *windowOp[S]) OpenClocked(_ context.Context, partition, _ int, clk clock.Clock) (exec.PersistTask, error) {
	return &windowTask[S]{op: w, id: windowID(w.name, partition), clk: clock.Or(clk)}, nil
}

// windowID names a window task in its store.
func windowID(name string, partition int) string { return name + "/" + strconv.Itoa(partition) }

type windowTask[S any] struct {
	op  *windowOp[S]
	id  string
	clk clock.Clock

	// last is the state this task stored last, at txid lastTx, if valid:
	// only this task writes its id's records, so no record lies between
	// lastTx and a later txid without a Put here (a failed Put clears it).
	last   window.State
	lastTx txn.TxID
	valid  bool
}

// state is the store: windows cannot be queried.
func (t *windowTask[S]) State() any { return t.op.store }

// windowBatch collects a batch's tuples, encoded.
type windowBatch struct {
	op interface {
		item(values []any) (window.Item, error)
	}
	items []window.Item
}

func (b *windowBatch) Add(values []any) error {
	it, err := b.op.item(values)
	if err != nil {
		return err
	}
	b.items = append(b.items, it)
	return nil
}

func (t *windowTask[S]) NewBatch() exec.BatchAcc { return &windowBatch{op: t.op} }

// item encodes the stored fields of a tuple and reads its event time.
func (w *windowOp[S]) item(values []any) (window.Item, error) {
	var it window.Item
	if w.timeIdx >= 0 {
		ts, ok := values[w.timeIdx].(time.Time)
		if !ok {
			return it, Reject(fmt.Errorf("window %s: event time %v (%T) is not a time.Time", w.name, values[w.timeIdx], values[w.timeIdx]))
		}
		it.Pos = ts.UnixNano()
	}
	data, err := encodeValues(exec.Pick(values, w.stored))
	if err != nil {
		return it, Reject(fmt.Errorf("window %s: %w", w.name, err))
	}
	it.Data = data
	return it, nil
}

// commit runs the batch through the window core, or, if the batch's txid
// has a record already (a replay of a commit that stored it), re-emits
// the windows stored in it.
func (t *windowTask[S]) Commit(ctx context.Context, txid txn.TxID, acc exec.BatchAcc, out Collector) error {
	st := t.op.store
	rec, err := st.Get(ctx, t.id, txid)
	switch {
	case err == nil:
		r, err := window.UnmarshalRecord(rec)
		if err != nil {
			return fmt.Errorf("window %s: record of batch %d: %w", t.id, txid, err)
		}
		return emitFired(r.Fired, out)
	case !errors.Is(err, windowstore.ErrNotFound):
		return err
	}
	prev, err := t.before(ctx, txid)
	if err != nil {
		return err
	}
	var items []window.Item
	if acc != nil {
		items = acc.(*windowBatch).items
	}
	next, fired, _ := window.Advance(t.op.spec, prev, items, t.clk.Now().UnixNano())
	if len(items) == 0 && len(fired) == 0 {
		// Nothing to store or emit. Only a processing-time watermark moved;
		// the next batch moves it from the stored one over the same windows
		// (none of which holds an item up to this batch's time).
		return nil
	}
	// The aggregator sees attempt 0 of the txid: what it computes is
	// stored and never recomputed for this txid.
	enc, err := t.aggregate(txn.Attempt{TxID: txid}, fired)
	if err != nil {
		return err
	}
	b, err := window.Record{State: next, Fired: enc}.Marshal()
	if err != nil {
		return err
	}
	t.valid = false // a Put that fails may have written
	if err := st.Put(ctx, t.id, txid, b, txid-1); err != nil {
		return err
	}
	t.last, t.lastTx, t.valid = next, txid, true
	return emitFired(enc, out)
}

// before returns the state stored last before txid: the one this task
// stored, or else the store's.
func (t *windowTask[S]) before(ctx context.Context, txid txn.TxID) (window.State, error) {
	if t.valid && t.lastTx < txid {
		return t.last, nil
	}
	_, rec, err := t.op.store.Last(ctx, t.id, txid)
	switch {
	case errors.Is(err, windowstore.ErrNotFound):
		return window.Initial(), nil
	case err != nil:
		return window.State{}, err
	}
	r, err := window.UnmarshalRecord(rec)
	if err != nil {
		return window.State{}, fmt.Errorf("window %s: record before batch %d: %w", t.id, txid, err)
	}
	return r.State, nil
}

// aggregate runs the aggregator over each fired window (per group) and
// returns the encoded output tuples.
func (t *windowTask[S]) aggregate(a txn.Attempt, fired []window.Window) ([][]byte, error) {
	var out [][]byte
	for _, w := range fired {
		groups, err := t.groups(w)
		if err != nil {
			return nil, err
		}
		start, end := t.bound(w.Start), t.bound(w.End)
		for _, g := range groups {
			c := &captureCollector{}
			acc, err := t.op.agg.Init(a, c)
			if err != nil {
				return nil, err
			}
			for _, vals := range g.tuples {
				if acc, err = t.op.agg.Aggregate(acc, Tuple{values: vals, sch: t.op.inSch}, c); err != nil {
					return nil, err
				}
			}
			if err := t.op.agg.Complete(acc, c); err != nil {
				return nil, err
			}
			for _, em := range c.emitted {
				b, err := encodeValues(append(append(append([]any{}, g.key...), start, end), em...))
				if err != nil {
					return nil, fmt.Errorf("window %s: output: %w", t.id, err)
				}
				out = append(out, b)
			}
		}
	}
	return out, nil
}

type windowGroup struct {
	key    []any
	tuples [][]any // the aggregator's input values
}

// groups decodes a window's items and splits them by group, in the order
// the groups first appear.
func (t *windowTask[S]) groups(w window.Window) ([]*windowGroup, error) {
	var order []*windowGroup
	byKey := map[string]*windowGroup{}
	for _, it := range w.Items {
		vals, err := decodeValues(it.Data)
		if err != nil {
			return nil, fmt.Errorf("window %s: stored tuple: %w", t.id, err)
		}
		k := ""
		if t.op.nGroup > 0 {
			key, err := state.NewKey(vals[:t.op.nGroup]...)
			if err != nil {
				return nil, err
			}
			k = key.Encoded()
		}
		g := byKey[k]
		if g == nil {
			g = &windowGroup{key: vals[:t.op.nGroup:t.op.nGroup]}
			byKey[k] = g
			order = append(order, g)
		}
		g.tuples = append(g.tuples, vals[t.op.nGroup:])
	}
	return order, nil
}

// bound is a window bound as an output value.
func (t *windowTask[S]) bound(p int64) any {
	if t.op.spec.Mode == window.Count {
		return p
	}
	return time.Unix(0, p).UTC()
}

func emitFired(fired [][]byte, out Collector) error {
	for _, b := range fired {
		vals, err := decodeValues(b)
		if err != nil {
			return fmt.Errorf("window: stored output: %w", err)
		}
		out.Emit(vals...)
	}
	return nil
}

// captureCollector keeps what an aggregator emits.
type captureCollector struct{ emitted [][]any }

func (c *captureCollector) Emit(values ...any) { c.emitted = append(c.emitted, values) }
func (c *captureCollector) ReportError(error)  {}

// RemoveWindow deletes the records partition of the window named name
// keeps in store (Storm's WindowsStore.removeAll for one window task): for
// a window dropped from the topology, or the partitions left behind when
// its parallelism shrank. Run it while no task of the window runs; a
// window whose records are removed starts empty.
func RemoveWindow(ctx context.Context, store WindowsStore, name string, partition int) error {
	return store.Remove(ctx, windowID(name, partition))
}

// WindowLate returns how many tuples the window named name dropped as
// late in partition (task) partition, as of the last record in store.
func WindowLate(ctx context.Context, store WindowsStore, name string, partition int) (int64, error) {
	_, rec, err := store.Last(ctx, windowID(name, partition), math.MaxUint64)
	if errors.Is(err, windowstore.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	r, err := window.UnmarshalRecord(rec)
	if err != nil {
		return 0, err
	}
	return r.State.Late, nil
}
