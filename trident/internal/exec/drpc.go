package exec

import (
	"context"
	"errors"

	"github.com/squallstream/squall/drpc"
	"github.com/squallstream/squall/trident/internal/plan"
	"github.com/squallstream/squall/trident/internal/runtime"
)

// The work of a DRPC request in a stage task. A node downstream of a DRPC
// stream runs the batch's tuples under the context of the batch's request
// (drpc.Function.Context) joined with the task's: once the request ends
// without an answer, its functions see a done context, its tuples go no
// further and its errors are dropped, and Finish skips its aggregations,
// joins and queries. Committers are never skipped: a batch commits the
// state it wrote.

// Request is a DRPC function a topology serves, as the nodes downstream
// of its stream work for it.
type Request struct {
	Server   *drpc.Server
	Function string
}

// batchRequest is a DRPC function's request in one batch of a stage task.
type batchRequest struct {
	r   *Request
	ctx context.Context // the task's context, or the request's joined with it
}

// requestOf returns the DRPC function node n works for, nil if none.
func (s *Processor) requestOf(n *plan.Node) *Request {
	if s.requests == nil {
		return nil
	}
	return s.requests[n.ID]
}

// ctxOf returns the context node n runs the batch's tuples under.
func (s *Processor) ctxOf(n *plan.Node, bt *runtime.Batch) context.Context {
	r := s.requestOf(n)
	if r == nil {
		return s.ctx
	}
	return s.request(r, bt)
}

// rejectedAt sends a tuple of node n's input that n's operation rejected
// to the dead letters (rejected) and, if n works for a DRPC request of
// the batch, ends the request with drpc.ErrRejected naming the cause: its
// caller gets an error, not a result computed without the tuple.
func (s *Processor) rejectedAt(n *plan.Node, bt *runtime.Batch, err error, values []any) error {
	if err := s.rejected(err, bt.Attempt, n.Parents[0].Fields, values); err != nil {
		return err
	}
	r := s.requestOf(n)
	if r == nil {
		return nil
	}
	var rej *rejection
	if errors.As(err, &rej) {
		r.Server.Reject(r.Function, uint64(bt.Attempt.TxID), rej.err)
	}
	return nil
}

// abandoned reports whether node n works for a DRPC request of the batch
// that ended without an answer. It is asked for every tuple at every
// node, and small enough to be inlined where no node works for one.
func (s *Processor) abandoned(n *plan.Node, bt *runtime.Batch) bool {
	return s.requests != nil && s.ended(n, bt)
}

// ended reports whether node n works for a DRPC request of the batch that
// ended without an answer.
func (s *Processor) ended(n *plan.Node, bt *runtime.Batch) bool {
	r := s.requestOf(n)
	return r != nil && s.request(r, bt).Err() != nil
}

// request returns the context of r's request in the batch, made on first
// use: the task's context joined with the request's, or the task's if the
// batch carries no request of r. The joined context is released when the
// request's ends, which every request's does (drpc.Function.Context).
func (s *Processor) request(r *Request, bt *runtime.Batch) context.Context {
	data := bt.Data.(*batchData)
	for _, br := range data.drpc {
		if br.r == r {
			return br.ctx
		}
	}
	ctx := s.ctx
	if rc := r.Server.Context(r.Function, uint64(bt.Attempt.TxID)); rc != nil {
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(s.ctx)
		context.AfterFunc(rc, func() { cancel(context.Cause(rc)) })
	}
	data.drpc = append(data.drpc, batchRequest{r: r, ctx: ctx})
	return ctx
}
