package trident

import (
	"context"
	"errors"

	"github.com/squallstream/squall/trident/internal/runtime"
)

// The work of a DRPC request in a stage task. A node downstream of a DRPC
// stream runs the batch's tuples under the context of the batch's request
// (drpc.Function.Context) joined with the task's: once the request ends
// without an answer, its functions see a done context, its tuples go no
// further and its errors are dropped, and Finish skips its aggregations,
// joins and queries. Committers are never skipped: a batch commits the
// state it wrote.

// drpcLineage returns, by node id, the DRPC function each node's tuples
// come from (nil for none), or nil if t serves none. A node fed by
// several DRPC streams (a merge or join of them) gets the first.
func (t *Topology) drpcLineage() []*drpcDecl {
	if len(t.drpc) == 0 {
		return nil
	}
	of := make([]*drpcDecl, len(t.nodes))
	for _, d := range t.drpc {
		if d.src != nil {
			of[d.src.id] = d
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

// batchRequest is a DRPC function's request in one batch of a stage task.
type batchRequest struct {
	d   *drpcDecl
	ctx context.Context // the task's context, or the request's joined with it
}

// ctxOf returns the context node n runs the batch's tuples under.
func (s *stageTask) ctxOf(n *node, bt *runtime.Batch) context.Context {
	if s.drpc == nil || s.drpc[n.id] == nil {
		return s.ctx
	}
	return s.request(s.drpc[n.id], bt)
}

// rejectedAt sends a tuple of node n's input that n's operation rejected
// to the dead letters (rejected) and, if n works for a DRPC request of
// the batch, ends the request with drpc.ErrRejected naming the cause: its
// caller gets an error, not a result computed without the tuple.
func (s *stageTask) rejectedAt(n *node, bt *runtime.Batch, err error, values []any) error {
	if err := s.rejected(err, bt.Attempt, n.parent.sch.fields, values); err != nil {
		return err
	}
	if s.drpc == nil || s.drpc[n.id] == nil {
		return nil
	}
	var r *rejection
	if errors.As(err, &r) {
		d := s.drpc[n.id]
		d.server.Reject(d.function, uint64(bt.Attempt.TxID), r.err)
	}
	return nil
}

// abandoned reports whether node n works for a DRPC request of the batch
// that ended without an answer.
func (s *stageTask) abandoned(n *node, bt *runtime.Batch) bool {
	if s.drpc == nil || s.drpc[n.id] == nil {
		return false
	}
	return s.request(s.drpc[n.id], bt).Err() != nil
}

// request returns the context of d's request in the batch, made on first
// use: the task's context joined with the request's, or the task's if the
// batch carries no request of d. The joined context is released when the
// request's ends, which every request's does (drpc.Function.Context).
func (s *stageTask) request(d *drpcDecl, bt *runtime.Batch) context.Context {
	data := bt.Data.(*batchData)
	for _, r := range data.drpc {
		if r.d == d {
			return r.ctx
		}
	}
	ctx := s.ctx
	if rc := d.server.Context(d.function, uint64(bt.Attempt.TxID)); rc != nil {
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(s.ctx)
		context.AfterFunc(rc, func() { cancel(context.Cause(rc)) })
	}
	data.drpc = append(data.drpc, batchRequest{d: d, ctx: ctx})
	return ctx
}
