package runtime

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"testing"

	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/internal/completion"
	"github.com/squallstream/squall/trident/internal/plan"
	"github.com/squallstream/squall/txn"
)

// fakeOutput records what a stageBolt does with its tuples.
type fakeOutput struct {
	acked, failed []*topology.Tuple
	errs          []error
	emitted       int
}

func (f *fakeOutput) EmitStream(string, topology.Values, ...*topology.Tuple) []topology.TaskID {
	f.emitted++
	return nil
}
func (f *fakeOutput) EmitDirect(topology.TaskID, string, topology.Values, ...*topology.Tuple) {
	f.emitted++
}
func (f *fakeOutput) Ack(t *topology.Tuple)  { f.acked = append(f.acked, t) }
func (f *fakeOutput) Fail(t *topology.Tuple) { f.failed = append(f.failed, t) }
func (f *fakeOutput) ReportError(err error)  { f.errs = append(f.errs, err) }

// nopProcessor runs no operations.
type nopProcessor struct{}

func (nopProcessor) Open(context.Context, *Task) error       { return nil }
func (nopProcessor) Begin(txn.Attempt) any                   { return nil }
func (nopProcessor) Source(*Batch, []any) error              { return nil }
func (nopProcessor) Execute(*Batch, plan.Input, []any) error { return nil }
func (nopProcessor) Finish(*Batch) error                     { return nil }

// splitBolt returns a task of the stage after a shuffle of sentences,
// expecting one report per batch.
func splitBolt(t *testing.T) (*stageBolt, *fakeOutput, string) {
	src := &plan.Node{ID: 0, Kind: plan.Source, Name: "source", Stream: "s", Fields: []string{"sentence"}}
	shuffle := &plan.Node{ID: 1, Kind: plan.Partition, Name: "partition", Route: plan.Route{How: plan.Shuffle}, Parents: []*plan.Node{src}, Fields: src.Fields}
	each := &plan.Node{ID: 2, Kind: plan.Op, Name: "each", In: []string{"sentence"}, Parents: []*plan.Node{shuffle}, Fields: []string{"sentence", "word"}}
	p := plan.New([]*plan.Node{src, shuffle, each})
	s := p.Stages[1]
	out := &fakeOutput{}
	m, err := completion.New[*topology.Tuple](completion.Config{Reports: 1, EarlyReports: 1})
	if err != nil {
		t.Fatal(err)
	}
	st := NewStatus(coordstore.Fence{Owner: "t", Generation: 1})
	b := &stageBolt{stage: s, cfg: &Config{}, status: st, ctx: context.Background(), out: out, proc: nopProcessor{},
		task:       Task{Topology: "counts", Stage: s, Log: slog.New(slog.DiscardHandler), Status: st, out: out},
		completion: m, batches: map[txn.TxID]*Batch{}, inputs: map[string]plan.Input{s.Inputs[0].Stream(): s.Inputs[0]}}
	return b, out, s.Inputs[0].Stream()
}

func TestCountMismatchFailsTheBatch(t *testing.T) {
	b, out, stream := splitBolt(t)
	a := txn.Attempt{TxID: 1}
	b.Execute(topology.NewTestTuple("spout-s", stream, topology.Fields{fieldBatch, "sentence"}, topology.Values{a, "a b"}))
	report := topology.NewTestTuple("spout-s", streamReport, topology.Fields{fieldBatch, "count"}, topology.Values{a, 2})
	b.Execute(report)
	if len(out.failed) != 1 || !sameTuple(out.failed[0], report) {
		t.Fatalf("failed %v; want the held report", out.failed)
	}
	if len(out.errs) != 1 || !errors.Is(out.errs[0], ErrCountMismatch) {
		t.Fatalf("reported %v; want the count mismatch", out.errs)
	}
	// The failed attempt stays marked as failed: a late report for it
	// fails too, until a newer attempt replaces it.
	if _, p := b.completion.Status(1); p != completion.Failed {
		t.Fatal("the failed batch is not kept as failed")
	}
	late := topology.NewTestTuple("spout-s", streamReport, topology.Fields{fieldBatch, "count"}, topology.Values{a, 0})
	b.Execute(late)
	if len(out.failed) != 2 || !sameTuple(out.failed[1], late) {
		t.Fatalf("failed %v; want the late report failed too", out.failed)
	}
	b.Execute(topology.NewTestTuple("spout-s", stream, topology.Fields{fieldBatch, "sentence"}, topology.Values{txn.Attempt{TxID: 1, N: 1}, "c"}))
	if a, p := b.completion.Status(1); p != completion.Open || a.N != 1 {
		t.Fatal("a newer attempt did not replace the failed one")
	}
}

func TestMatchingCountFinishesTheBatch(t *testing.T) {
	b, out, stream := splitBolt(t)
	a := txn.Attempt{TxID: 1}
	data := topology.NewTestTuple("spout-s", stream, topology.Fields{fieldBatch, "sentence"}, topology.Values{a, "a b"})
	b.Execute(data)
	report := topology.NewTestTuple("spout-s", streamReport, topology.Fields{fieldBatch, "count"}, topology.Values{a, 1})
	b.Execute(report)
	if len(out.failed) != 0 || len(out.acked) != 2 || !sameTuple(out.acked[1], report) {
		t.Fatalf("acked %d, failed %d; want the data tuple and the report acked", len(out.acked), len(out.failed))
	}
	// A report for an older attempt is ignored once a newer one is tracked.
	b.Execute(topology.NewTestTuple("spout-s", streamReport, topology.Fields{fieldBatch, "count"}, topology.Values{txn.Attempt{TxID: 2, N: 1}, 0}))
	stale := topology.NewTestTuple("spout-s", streamReport, topology.Fields{fieldBatch, "count"}, topology.Values{txn.Attempt{TxID: 2, N: 0}, 5})
	b.Execute(stale)
	if !sameTuple(out.acked[len(out.acked)-1], stale) || len(out.failed) != 0 {
		t.Fatal("a stale report was not simply acked")
	}
}

// sameTuple reports whether got is want or the copy of it the stage bolt
// holds (the bolt is a topology.Borrower: it keeps copies, not pointers
// into its executor's batches).
func sameTuple(got, want *topology.Tuple) bool {
	return got == want || reflect.DeepEqual(*got, *want)
}
