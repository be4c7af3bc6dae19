package nontransactional

import (
	"context"
	"iter"

	"github.com/squallstream/squall/state"
)

// Tuples lists what the map holds, as Storm's ITupleCollection does (it
// is what ops.TupleCollectionGet reads): for each key present, the key's
// values followed by the value MultiGet reads for it (see state.Tuples).
// The backing map lists the keys; one that cannot (not a
// state.KeyLister) makes the sequence yield an error matching
// state.ErrNotListable.
func (m *Map[V]) Tuples(ctx context.Context) iter.Seq2[[]any, error] {
	return state.Tuples[V](ctx, m, state.ListKeys(ctx, m.store.Backing))
}
