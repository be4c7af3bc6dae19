package trident

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/internal/completion"
	"github.com/squallstream/squall/trident/spout"
)

// fakeOutput records what a groupBolt does with its tuples.
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

// splitBolt returns a task of the group after a shuffle of sentences,
// expecting one report per batch.
func splitBolt(t *testing.T) (*groupBolt, *fakeOutput, string) {
	tt := NewTopology("counts")
	s := tt.NewStream("s", BatchSource(Fields{"sentence"}, func() spout.Batcher { return newFixed(1) }))
	s.Shuffle().Each(Fields{"sentence"}, split, "word")
	p := tt.plan()
	g := p.groups[1]
	out := &fakeOutput{}
	m, err := completion.New[*topology.Tuple](completion.Config{Reports: 1, EarlyReports: 1})
	if err != nil {
		t.Fatal(err)
	}
	b := &groupBolt{plan: p, g: g, cfg: &Config{}, status: newStatus(coordstore.Fence{Owner: "t", Generation: 1}), ctx: context.Background(), out: out, log: slog.New(slog.DiscardHandler),
		completion: m, batches: map[state.TxID]*batch{}, inputs: map[string]input{g.inputs[0].stream(): g.inputs[0]},
		persist: map[*node]persistTask{}, static: map[*node]any{}}
	return b, out, g.inputs[0].stream()
}

func TestCountMismatchFailsTheBatch(t *testing.T) {
	b, out, stream := splitBolt(t)
	a := Attempt{TxID: 1}
	b.Execute(topology.NewTestTuple("spout-s", stream, Fields{fieldBatch, "sentence"}, topology.Values{a, "a b"}))
	report := topology.NewTestTuple("spout-s", streamCoord, Fields{fieldBatch, "count"}, topology.Values{a, 2})
	b.Execute(report)
	if len(out.failed) != 1 || out.failed[0] != report {
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
	late := topology.NewTestTuple("spout-s", streamCoord, Fields{fieldBatch, "count"}, topology.Values{a, 0})
	b.Execute(late)
	if len(out.failed) != 2 || out.failed[1] != late {
		t.Fatalf("failed %v; want the late report failed too", out.failed)
	}
	b.Execute(topology.NewTestTuple("spout-s", stream, Fields{fieldBatch, "sentence"}, topology.Values{Attempt{TxID: 1, N: 1}, "c"}))
	if a, p := b.completion.Status(1); p != completion.Open || a.N != 1 {
		t.Fatal("a newer attempt did not replace the failed one")
	}
}

func TestMatchingCountFinishesTheBatch(t *testing.T) {
	b, out, stream := splitBolt(t)
	a := Attempt{TxID: 1}
	data := topology.NewTestTuple("spout-s", stream, Fields{fieldBatch, "sentence"}, topology.Values{a, "a b"})
	b.Execute(data)
	report := topology.NewTestTuple("spout-s", streamCoord, Fields{fieldBatch, "count"}, topology.Values{a, 1})
	b.Execute(report)
	if len(out.failed) != 0 || len(out.acked) != 2 || out.acked[1] != report {
		t.Fatalf("acked %d, failed %d; want the data tuple and the report acked", len(out.acked), len(out.failed))
	}
	// A report for an older attempt is ignored once a newer one is tracked.
	b.Execute(topology.NewTestTuple("spout-s", streamCoord, Fields{fieldBatch, "count"}, topology.Values{Attempt{TxID: 2, N: 1}, 0}))
	stale := topology.NewTestTuple("spout-s", streamCoord, Fields{fieldBatch, "count"}, topology.Values{Attempt{TxID: 2, N: 0}, 5})
	b.Execute(stale)
	if out.acked[len(out.acked)-1] != stale || len(out.failed) != 0 {
		t.Fatal("a stale report was not simply acked")
	}
}
