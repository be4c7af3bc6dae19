package opaque

import (
	"context"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/internal/core"
	"github.com/squallstream/squall/txn"
)

var _ state.CommittedReader[int] = (*Map[int])(nil)

// MultiGetCommitted implements state.CommittedReader: for a stored value
// with txid S, Curr if S <= committed (absent if S removed the key),
// otherwise Prev (absent when S was the first batch to write the key). Commits happen in txid order, so Prev
// of a value written after committed was written by a committed batch.
func (m *Map[V]) MultiGetCommitted(ctx context.Context, committed txn.TxID, keys []state.Key) ([]state.Entry[V], error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return core.Get(ctx, &m.store, keys, m.codec, func(c *core.Call[record], i int) (state.Entry[[]byte], error) {
		s := c.Slot(i)
		switch {
		case !s.Found:
			return state.Entry[[]byte]{}, nil
		case s.Rec.TxID > committed:
			return state.Entry[[]byte]{Val: s.Rec.Prev, Found: s.Rec.HasPrev}, nil
		}
		return state.Entry[[]byte]{Val: s.Rec.Curr, Found: !s.Rec.Removed}, nil
	})
}
