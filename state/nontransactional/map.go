package nontransactional

import (
	"context"
	"sync"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/internal/core"
	"github.com/squallstream/squall/state/internal/wire"
	"github.com/squallstream/squall/txn"
)

// format stores a value as the plain envelope [kind|version, value], and
// a tombstone as [kind|removed|version].
var format = core.Format[wire.Plain]{
	Append:  wire.AppendPlain,
	Parse:   wire.ParsePlain,
	Removed: func(r wire.Plain) bool { return r.Removed },
}

// stored picks the stored user value of keys[i], for core.Get: absent for
// a tombstone.
func stored(c *core.Call[wire.Plain], i int) (state.Entry[[]byte], error) {
	s := c.Slot(i)
	return state.Entry[[]byte]{Val: s.Rec.Val, Found: s.Found && !s.Rec.Removed}, nil
}

// Map is a non-transactional MapState over a backing map (Storm's
// NonTransactionalMap): MultiUpdate reads every key, applies the updaters
// and writes every key back. BeginCommit and Commit do nothing, and
// updates are allowed outside a commit. MultiRemove (state.Remover)
// deletes the keys from a backing map that can delete (state.Deleter) and
// stores tombstones otherwise. Map is safe for concurrent use; calls are
// serialized.
type Map[V any] struct {
	mu    sync.Mutex
	codec state.Codec[V]
	store core.Store[wire.Plain]
}

var _ state.RemovableMapState[int] = (*Map[int])(nil)

// New returns a non-transactional map storing its values in m.
func New[V any](m state.BackingMap[[]byte], opts state.MapOptions[V]) *Map[V] {
	return &Map[V]{codec: opts.CodecOrDefault(), store: core.NewStore(m, opts.Name, format, false)}
}

// BeginCommit does nothing.
func (m *Map[V]) BeginCommit(context.Context, txn.TxID) error { return nil }

// Commit does nothing.
func (m *Map[V]) Commit(context.Context, txn.TxID) error { return nil }

// SetCorruptHandler implements state.CorruptHandling: h decides what
// becomes of stored values that cannot be decoded.
func (m *Map[V]) SetCorruptHandler(h state.CorruptHandler) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.store.OnCorrupt = h
}

// MultiGet returns the stored values.
func (m *Map[V]) MultiGet(ctx context.Context, keys []state.Key) ([]state.Entry[V], error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return core.Get(ctx, &m.store, keys, m.codec, stored)
}

// MultiUpdate applies every updater to the stored value and writes every
// key back.
func (m *Map[V]) MultiUpdate(ctx context.Context, keys []state.Key, updaters []state.ValueUpdater[V]) ([]V, error) {
	if len(keys) != len(updaters) {
		return nil, state.ErrLength
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c, err := m.store.Load(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := make([]V, len(keys))
	for i := range keys {
		s := c.Slot(i)
		var old V
		s.Found = s.Found && !s.Rec.Removed
		if s.Found {
			if old, s.Found, err = core.Decode(ctx, c, i, m.codec, s.Rec.Val); err != nil {
				return nil, err
			}
		}
		nv := updaters[i].Update(old, s.Found)
		raw, err := core.Encode(m.codec, nv)
		if err != nil {
			return nil, err
		}
		c.Set(i, wire.Plain{Val: raw})
		out[i] = nv
	}
	if err := c.Flush(ctx); err != nil {
		return nil, err
	}
	return out, nil
}

// MultiPut writes the values.
func (m *Map[V]) MultiPut(ctx context.Context, keys []state.Key, vals []V) error {
	if len(keys) != len(vals) {
		return state.ErrLength
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.store.Blind(keys)
	for i, v := range vals {
		raw, err := core.Encode(m.codec, v)
		if err != nil {
			return err
		}
		c.Set(i, wire.Plain{Val: raw})
	}
	return c.Flush(ctx)
}

// MultiRemove deletes the keys from the backing map if it can delete, and
// stores tombstones in them otherwise.
func (m *Map[V]) MultiRemove(ctx context.Context, keys []state.Key) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(keys) == 0 {
		return nil
	}
	deleted, err := state.Delete(ctx, m.store.Backing, keys)
	if err != nil {
		return state.WrapBackingError(m.store.Name, "delete", len(keys), err)
	}
	if deleted {
		return nil
	}
	c := m.store.Blind(keys)
	for i := range keys {
		c.Set(i, wire.Plain{Removed: true})
	}
	return c.Flush(ctx)
}

// Volatile reports whether the backing map keeps its data in memory only
// (state.Volatile).
func (m *Map[V]) Volatile() bool { return m.store.Volatile() }
