package opaque

import (
	"context"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/internal/core"
)

var _ state.CommittedReader[int] = (*Map[int])(nil)

// MultiGetCommitted implements state.CommittedReader: for a stored value
// with txid S, Curr if S <= committed, otherwise Prev (absent when S was
// the first batch to write the key). Commits happen in txid order, so Prev
// of a value written after committed was written by a committed batch.
func (m *Map[V]) MultiGetCommitted(ctx context.Context, committed state.TxID, keys []state.Key) ([]state.Entry[V], error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, err := m.store.Load(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := make([]state.Entry[V], len(keys))
	for i := range keys {
		s := c.Slot(i)
		if !s.Found {
			continue
		}
		raw, found := s.Rec.Curr, true
		if s.Rec.TxID > committed {
			raw, found = s.Rec.Prev, s.Rec.HasPrev
		}
		if found {
			if out[i].Val, out[i].Found, err = core.Decode(ctx, c, i, m.codec, raw); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
