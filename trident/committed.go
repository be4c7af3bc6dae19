package trident

import (
	"context"
	"errors"
	"fmt"

	"github.com/squallstream/squall/trident/internal/exec"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/trident/internal/plan"
)

// ErrNoCommittedRead is matched by the error of ReadCommitted on map state
// that cannot tell committed values from uncommitted ones (it does not
// implement state.CommittedReader; opaque state does).
var ErrNoCommittedRead = errors.New("trident: the state cannot tell committed values apart")

// mapFactory is implemented by the operations that keep grouped map state.
type mapFactory[V any] interface{ mapFactory() StateFactory[V] }

func (p *persistCombiner[V]) mapFactory() StateFactory[V] { return p.factory }
func (o *reduceOp[V]) mapFactory() StateFactory[V]        { return o.factory }

// ReadCommitted returns the values of keys in st, the map state of a
// persistent aggregation (PersistentAggregate, PersistentAggregateGlobal,
// PersistentReduce) of the topology r runs, as of r's last committed
// batch: a batch that wrote its values but did not commit (its commit
// failed half-way, or is under way) is not seen. A key is
// state.NewKey of the group's values (state.GlobalKey for
// PersistentAggregateGlobal); a key never written is not Found.
//
// The state must implement state.CommittedReader, as opaque state does;
// other state gives an error matching ErrNoCommittedRead. Every value
// returned was written by a committed batch; values of different keys
// come from the same batch only if no commit ran during the read (stop or
// Deactivate the topology and let it drain for a consistent snapshot).
// It opens each of the aggregation's partitions with the state's factory
// and reads every key from each.
func ReadCommitted[V any](ctx context.Context, r *Running, st *State[state.MapState[V]], keys ...state.Key) ([]state.Entry[V], error) {
	if r == nil || st == nil || st.n == nil || st.t != r.t {
		return nil, fmt.Errorf("%w: ReadCommitted: the state is not written by the running topology", ErrInvalid)
	}
	var mf mapFactory[V]
	p, ok := st.n.op.(*exec.Persist)
	if ok {
		mf, ok = p.P.(mapFactory[V])
	}
	var stage *plan.Stage
	if ok {
		stage = r.plan.StageOf(r.graph[st.n.id])
	}
	if !ok || stage == nil {
		return nil, fmt.Errorf("%w: ReadCommitted: the state is not the map state of a persistent aggregation", ErrInvalid)
	}
	committed := r.Committed()
	parts := stage.Parallelism
	out := make([]state.Entry[V], len(keys))
	for p := range parts {
		ms, err := openMapState(ctx, mf.mapFactory(), p, parts)
		if err != nil {
			return nil, err
		}
		cr, ok := ms.(state.CommittedReader[V])
		if !ok {
			return nil, fmt.Errorf("%w: %T", ErrNoCommittedRead, ms)
		}
		got, err := cr.MultiGetCommitted(ctx, committed, keys)
		if err != nil {
			return nil, fmt.Errorf("trident: reading committed state of partition %d: %w", p, err)
		}
		for i, e := range got {
			if e.Found && !out[i].Found {
				out[i] = e
			}
		}
	}
	return out, nil
}
