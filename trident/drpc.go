package trident

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/squallstream/squall/trident/internal/exec"

	"github.com/squallstream/squall/drpc"
	"github.com/squallstream/squall/trident/internal/plan"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// drpcDecl is one function a topology serves.
type drpcDecl struct {
	server   *drpc.Server
	function string
	work     exec.Request                  // what the processors of the nodes downstream work for
	returned bool                          // ReturnResults names it
	cause    func(txid uint64) error       // why a batch failed; set at Submit
	src      *node                         // the stream's source node
	fn       atomic.Pointer[drpc.Function] // the function openDRPC opened
}

// NewDRPCStream returns a stream of the requests to function on server,
// with one field, "args": the request's arguments. Every request is a
// batch of its own, so aggregations and state queries downstream run per
// request, and ReturnResults sends each batch's tuples back as its
// request's result. A request waits for the next batch (BatchEmitInterval)
// and, if that batch's attempt fails, gets the failure (drpc.ErrFailed,
// with the cause) rather than a replay's result. The requests live in
// this process: a topology with DRPC streams runs with Submit, not split
// across worker processes.
//
// The work of a request runs under its context (drpc.Function.Context):
// the functions, filters and state queries downstream of the stream get a
// context that is done once the request ends without an answer (its
// deadline passed, its caller went away), and from then on the batch's
// tuples of the request go no further, their errors are dropped and the
// aggregations, joins and queries downstream do not run for it. State the
// stream writes is still committed with the batch.
func (t *Topology) NewDRPCStream(function string, server *drpc.Server) *Stream {
	d := &drpcDecl{server: server, function: function, work: exec.Request{Server: server, Function: function}}
	if server == nil {
		t.errorf("NewDRPCStream(%q): nil server", function)
	}
	for _, o := range t.drpc {
		if o.function == function && o.server == server {
			t.errorf("NewDRPCStream(%q): the function is declared twice", function)
		}
	}
	t.drpc = append(t.drpc, d)
	src := BatchSource(Fields{"args"}, func() spout.Batcher {
		f := server.Function(function)
		f.FailureCause(d.cause) // set by Submit before the spout starts
		return &drpcBatcher{f: f}
	})
	src.waiting = func() bool { // a waiting request ends the idle wait
		f := d.fn.Load()
		return f != nil && f.Waiting() > 0
	}
	s := t.NewStream("$drpc:"+function, src)
	d.src = s.n
	return s
}

// ReturnResults returns the values of fields of each batch's tuples of s
// to the request of the batch, as the result of function (declared with
// NewDRPCStream): one row per tuple, gathered in one task.
func ReturnResults(s *Stream, function string, fields ...string) {
	var d *drpcDecl
	for _, o := range s.t.drpc {
		if o.function == function {
			d = o
		}
	}
	if d == nil {
		s.t.errorf("ReturnResults(%q): no DRPC stream of that function", function)
		return
	}
	if d.returned {
		s.t.errorf("ReturnResults(%q): the function's results are returned twice", function)
	}
	d.returned = true
	Aggregate(s, fields, returnResults{d}, "$returned")
}

// checkDRPC reports DRPC functions whose results nothing returns.
func (t *Topology) checkDRPC() error {
	if len(t.drpc) == 0 {
		return nil
	}
	g := t.graph()
	p := plan.New(g)
	for _, d := range t.drpc {
		if !d.returned {
			return fmt.Errorf("DRPC function %q: no ReturnResults: its callers would wait until their deadline", d.function)
		}
		if st := p.StageOf(g[d.src.id]); st != nil && st.Parallelism > 1 {
			return fmt.Errorf("DRPC function %q: the operations next to its stream's source ask for %d tasks, and each task would see every request: "+
				"a DRPC stream's source runs in one task (in Storm, the DRPC spout's parallelism); put Shuffle() before the operations that need more", d.function, st.Parallelism)
		}
	}
	return nil
}

// drpcBatcher is the source of a DRPC stream: the request of each batch.
type drpcBatcher struct{ f *drpc.Function }

func (b *drpcBatcher) EmitBatch(_ context.Context, a txn.Attempt, c spout.Collector) error {
	if r := b.f.Next(uint64(a.TxID), int(a.N)); r != nil {
		c.Emit(r.Args)
	}
	return nil
}

func (b *drpcBatcher) Ack(_ context.Context, txid txn.TxID) error {
	b.f.Committed(uint64(txid))
	return nil
}

// Close fails the requests the stopping worker's batches hold.
func (b *drpcBatcher) Close() error { b.f.Release(); return nil }

// openDRPC has the servers take requests for the topology's functions.
func (t *Topology) openDRPC() {
	for _, d := range t.drpc {
		d.fn.Store(d.server.Function(d.function))
	}
}

// closeDRPC fails the requests of the topology's functions: it stopped.
func (t *Topology) closeDRPC() {
	for _, d := range t.drpc {
		d.server.Function(d.function).Close()
	}
}

// returnResults gathers a batch's tuples and answers its request.
type returnResults struct{ d *drpcDecl }

type gathered struct {
	txid uint64
	rows [][]any
}

func (r returnResults) Init(a txn.Attempt, _ Collector) (*gathered, error) {
	return &gathered{txid: uint64(a.TxID)}, nil
}

func (r returnResults) Aggregate(g *gathered, t Tuple, _ Collector) (*gathered, error) {
	g.rows = append(g.rows, slices.Clone(t.Values()))
	return g, nil
}

func (r returnResults) Complete(g *gathered, _ Collector) error {
	r.d.server.Answer(r.d.function, g.txid, g.rows)
	return nil
}

// drpcRequests returns, by node id, the DRPC function each node's tuples
// come from (nil for none), or nil if t serves none. A node fed by
// several DRPC streams (a merge or join of them) gets the first.
func (t *Topology) drpcRequests() []*exec.Request {
	if len(t.drpc) == 0 {
		return nil
	}
	of := make([]*exec.Request, len(t.nodes))
	for _, d := range t.drpc {
		if d.src != nil {
			of[d.src.id] = &d.work
		}
	}
	for _, n := range t.nodes { // parents come before their children
		for _, p := range n.inputs() {
			if of[n.id] == nil {
				of[n.id] = of[p.id]
			}
		}
	}
	return of
}
