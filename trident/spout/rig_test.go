package spout_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/trident/spout/spouttest"
	"github.com/squallstream/squall/txn"
)

const stream = "s"

type (
	rec     = spouttest.Record
	offsets = spouttest.Offsets
)

// tb is what the rig needs of a test; *testing.T and *rapid.T have it.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// rig plays the runtime around one partitioned spout: an allocator and
// one executor per task over a store and a spouttest.Source.
type rig struct {
	t        tb
	kind     spout.Kind
	store    coordstore.Store
	src      *spouttest.Source
	alloc    *spout.Allocator
	execs    []spout.Executor
	emitters []*spouttest.Emitter
	// committed is the last txid whose success the rig announced; it
	// stamps it on every batch, as the runtime does.
	committed txn.TxID
}

func newRig(t tb, kind spout.Kind, store coordstore.Store, src *spouttest.Source, tasks int) *rig {
	t.Helper()
	r := &rig{t: t, kind: kind, store: store, src: src}
	r.start(tasks)
	t.Cleanup(func() { r.stop() })
	return r
}

// start builds the allocator and executors over the rig's store.
func (r *rig) start(tasks int) {
	r.t.Helper()
	c, err := spout.NewAllocator(spout.AllocatorConfig{Kind: r.kind, Store: r.store, Stream: stream, Fence: testFence, Partitions: r.src})
	if err != nil {
		r.t.Fatal(err)
	}
	r.alloc, r.execs, r.emitters = c, nil, nil
	for i := range tasks {
		e := r.src.Emitter()
		cfg := spout.ExecutorConfig[offsets]{Store: r.store, Stream: stream, Fence: testFence, Task: i, NumTasks: tasks, Emitter: e}
		var x spout.Executor
		if r.kind == spout.Opaque {
			x, err = spout.NewOpaque(cfg)
		} else {
			x, err = spout.NewTransactional(cfg)
		}
		if err != nil {
			r.t.Fatal(err)
		}
		r.execs = append(r.execs, x)
		r.emitters = append(r.emitters, e)
	}
}

func (r *rig) stop() {
	if r.alloc != nil {
		r.alloc.Close()
	}
	for _, x := range r.execs {
		x.Close()
	}
	r.alloc, r.execs = nil, nil
}

// restart replaces allocator and executors, as a restarted worker does.
func (r *rig) restart(tasks int) {
	r.t.Helper()
	r.stop()
	r.start(tasks)
}

func at(txid txn.TxID, n uint32) txn.Attempt { return txn.Attempt{TxID: txid, N: n} }

// tryEmit begins a and has every task emit it; it returns the records in
// task order.
func (r *rig) tryEmit(a txn.Attempt) ([]rec, spout.Batch, error) {
	ctx := context.Background()
	b, err := r.alloc.Begin(ctx, a)
	if err != nil {
		return nil, b, err
	}
	b.Committed = r.committed
	var out []rec
	for _, x := range r.execs {
		var c spouttest.Collector
		if err := x.EmitBatch(ctx, b, &c); err != nil {
			return nil, b, err
		}
		out = append(out, c.Records()...)
	}
	return out, b, nil
}

func (r *rig) emit(a txn.Attempt) []rec {
	r.t.Helper()
	out, _, err := r.tryEmit(a)
	if err != nil {
		r.t.Fatalf("emit %s: %v", a, err)
	}
	return out
}

func (r *rig) tryBeginCommit(a txn.Attempt) error {
	ctx := context.Background()
	if err := r.alloc.BeginCommit(ctx, a); err != nil {
		return err
	}
	for _, x := range r.execs {
		if err := x.BeginCommit(ctx, a); err != nil {
			return err
		}
	}
	return nil
}

func (r *rig) beginCommit(a txn.Attempt) {
	r.t.Helper()
	if err := r.tryBeginCommit(a); err != nil {
		r.t.Fatalf("begin commit %s: %v", a, err)
	}
}

func (r *rig) trySuccess(txid txn.TxID) error {
	ctx := context.Background()
	if err := r.alloc.Success(ctx, txid); err != nil {
		return err
	}
	r.committed = max(r.committed, txid)
	for _, x := range r.execs {
		if err := x.Success(ctx, txid); err != nil {
			return err
		}
	}
	return nil
}

func (r *rig) success(txid txn.TxID) {
	r.t.Helper()
	if err := r.trySuccess(txid); err != nil {
		r.t.Fatalf("success %d: %v", txid, err)
	}
}

// commit runs the commit phase of a and its success.
func (r *rig) commit(a txn.Attempt) {
	r.t.Helper()
	r.beginCommit(a)
	r.success(a.TxID)
}

// batch emits and commits a, returning what it emitted.
func (r *rig) batch(a txn.Attempt) []rec {
	r.t.Helper()
	out := r.emit(a)
	r.commit(a)
	return out
}

// entries lists the entries of partition p (or "$partitions"), oldest
// first, as "txid=value" with the version byte dropped ("3=-" for a
// marker).
func entries(t tb, s coordstore.Store, p string) []string {
	t.Helper()
	var out []string
	k := coordstore.Key{Owner: testFence.Owner, Stream: stream, Partition: p}
	for txid := coordstore.MaxTxID; ; {
		e, ok, err := s.PrevMeta(context.Background(), k, txid)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		v := "-"
		if len(e.Value) > 0 {
			v = string(e.Value[1:])
		}
		out = append(out, fmt.Sprintf("%d=%s", e.TxID, v))
		txid = e.TxID
	}
	slices.Reverse(out)
	return out
}

func wantEntries(t tb, s coordstore.Store, p string, want ...string) {
	t.Helper()
	if got := entries(t, s, p); !slices.Equal(got, want) {
		t.Fatalf("entries of %s:\n got %q\nwant %q", p, got, want)
	}
}

// meta formats Offsets as the JSON codec stores them.
func meta(first, next int64) string { return fmt.Sprintf(`{"First":%d,"Next":%d}`, first, next) }

// recs builds the records p[from..to) with values v<offset>, or the
// values given.
func recs(p spout.Partition, from, to int64) []rec {
	var out []rec
	for o := from; o < to; o++ {
		out = append(out, rec{Partition: p, Offset: o, Value: fmt.Sprintf("%s-%d", p, o)})
	}
	return out
}

// fill appends n records to p, valued like recs.
func fill(src *spouttest.Source, p spout.Partition, n int) {
	end := src.End(p)
	for o := end; o < end+int64(n); o++ {
		src.Append(p, fmt.Sprintf("%s-%d", p, o))
	}
}

func cat(rs ...[]rec) []rec {
	var out []rec
	for _, r := range rs {
		out = append(out, r...)
	}
	return out
}

func wantRecs(t tb, what string, got, want []rec) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s:\n got %s\nwant %s", what, fmtRecs(got), fmtRecs(want))
	}
}

func fmtRecs(rs []rec) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, r := range rs {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s@%d", r.Partition, r.Offset)
	}
	b.WriteByte(']')
	return b.String()
}

var both = []spout.Kind{spout.Transactional, spout.Opaque}

func forKinds(t *testing.T, f func(t *testing.T, kind spout.Kind)) {
	for _, k := range both {
		t.Run(k.String(), func(t *testing.T) { f(t, k) })
	}
}

// tx converts an int to a txid.
func tx(i int) txn.TxID { return txn.TxID(i) }

func entry(txid int, v string) string { return fmt.Sprintf("%d=%s", txid, v) }

// sortRecs orders records by partition and offset.
func sortRecs(rs []rec) []rec {
	out := slices.Clone(rs)
	slices.SortFunc(out, func(a, b rec) int {
		if c := strings.Compare(string(a.Partition), string(b.Partition)); c != 0 {
			return c
		}
		return int(a.Offset - b.Offset)
	})
	return out
}
