package opaque

import (
	"context"
	"sync"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/internal/core"
	"github.com/squallstream/squall/txn"
)

// Map is an opaque transactional MapState over a backing map (Storm's
// OpaqueMap with its CachedBatchReadsMap). Within BeginCommit(T) …
// Commit(T), MultiUpdate does, for each key in order:
//
//   - absent key: the updater gets no value; the key is stored as
//     {T, new, no prev};
//   - key written earlier in this commit: the updater gets its curr;
//     prev is kept;
//   - key written by a batch before T: the updater gets curr, which
//     becomes prev;
//   - key written by T (a replay): the updater gets prev, which stays
//     prev;
//   - key written by a batch after T: *state.BehindError, nothing is
//     written.
//
// Every key of the call is then written with txid T in one MultiPut, keys
// in the order of their first occurrence. A failed MultiPut may leave any
// subset written; replaying the batch repairs it.
//
// MultiRemove (state.Remover) stores a tombstone {T, removed, prev}, with
// prev chosen as above: T and later batches read the key as absent, a
// replay of T reads prev again. The tombstones of batch T are deleted from
// a backing map that can delete (state.Deleter) when a later batch
// begins.
//
// Map is safe for concurrent use, but calls are serialized: the runtime
// drives one commit at a time.
type Map[V any] struct {
	mu    sync.Mutex
	codec state.Codec[V]
	store core.Store[record]
}

var _ state.RemovableMapState[int] = (*Map[int])(nil)

// New returns an opaque map storing its values in m.
func New[V any](m state.BackingMap[[]byte], opts state.MapOptions[V]) *Map[V] {
	return &Map[V]{codec: opts.CodecOrDefault(), store: core.NewStore(m, opts.Name, format, true)}
}

// BeginCommit starts batch txid and empties the per-commit read cache.
// Beginning the same txid again starts a replay. Beginning a later txid
// first deletes the tombstones the last commit left, if the backing map
// can delete (see Map).
func (m *Map[V]) BeginCommit(ctx context.Context, txid txn.TxID) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.store.Begin(ctx, txid)
}

// Commit ends batch txid; reads outside a commit see curr.
func (m *Map[V]) Commit(_ context.Context, txid txn.TxID) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.store.End(txid)
}

// SetCorruptHandler implements state.CorruptHandling: h decides what
// becomes of stored values that cannot be decoded.
func (m *Map[V]) SetCorruptHandler(h state.CorruptHandler) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.store.OnCorrupt = h
}

// MultiGet returns what the current batch sees: curr for keys written in
// this commit or by an earlier batch, prev during a replay, and curr for
// every key outside a commit.
func (m *Map[V]) MultiGet(ctx context.Context, keys []state.Key) ([]state.Entry[V], error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return core.Get(ctx, &m.store, keys, m.codec, m.old)
}

// MultiUpdate applies the updaters as described on Map and returns the new
// values.
func (m *Map[V]) MultiUpdate(ctx context.Context, keys []state.Key, updaters []state.ValueUpdater[V]) ([]V, error) {
	if len(keys) != len(updaters) {
		return nil, state.ErrLength
	}
	return m.update(ctx, keys, func(i int) state.ValueUpdater[V] { return updaters[i] })
}

// MultiPut sets the values, with the same bookkeeping as MultiUpdate (it
// is MultiUpdate with state.Replace updaters).
func (m *Map[V]) MultiPut(ctx context.Context, keys []state.Key, vals []V) error {
	if len(keys) != len(vals) {
		return state.ErrLength
	}
	_, err := m.update(ctx, keys, func(i int) state.ValueUpdater[V] { return state.Replace(vals[i]) })
	return err
}

func (m *Map[V]) update(ctx context.Context, keys []state.Key, updater func(int) state.ValueUpdater[V]) ([]V, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	tx := m.store.TxID()
	if tx == 0 {
		return nil, state.ErrNoTxID
	}
	c, err := m.store.Load(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := make([]V, len(keys))
	for i := range keys {
		old, err := m.old(c, i)
		if err != nil {
			return nil, err
		}
		u := updater(i)
		nv, isReplace := state.Replacement(u)
		if !isReplace {
			var ov V
			if old.Found {
				// A fresh decode per update: the updater may modify ov
				// freely, prev is kept as bytes.
				if ov, old.Found, err = core.Decode(ctx, c, i, m.codec, old.Val); err != nil {
					return nil, err
				}
			}
			nv = u.Update(ov, old.Found)
		}
		s := c.Slot(i) // after Decode, which may have made the key absent
		raw, err := core.Encode(m.codec, nv)
		if err != nil {
			return nil, err
		}
		rec := First(tx, raw)
		if s.Found {
			if rec, err = s.Rec.Update(tx, raw); err != nil {
				return nil, m.behind(c, i, err)
			}
		}
		c.Set(i, rec)
		out[i] = nv
	}
	if err := c.Flush(ctx); err != nil {
		return nil, err
	}
	return out, nil
}

// MultiRemove removes the keys within the current commit, as described on
// Map. Keys that are not stored are left alone.
func (m *Map[V]) MultiRemove(ctx context.Context, keys []state.Key) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	tx := m.store.TxID()
	if tx == 0 {
		return state.ErrNoTxID
	}
	c, err := m.store.Load(ctx, keys)
	if err != nil {
		return err
	}
	for i := range keys {
		s := c.Slot(i)
		if !s.Found {
			continue // nothing stored: nothing to remove, nothing to restore
		}
		rec, err := s.Rec.Remove(tx)
		if err != nil {
			return m.behind(c, i, err)
		}
		c.Set(i, rec)
	}
	return c.Flush(ctx)
}

// old returns the encoded value the current batch sees for keys[i].
func (m *Map[V]) old(c *core.Call[record], i int) (state.Entry[[]byte], error) {
	s := c.Slot(i)
	switch {
	case !s.Found:
		return state.Entry[[]byte]{}, nil
	case s.Cached:
		return state.Entry[[]byte]{Val: s.Rec.Curr, Found: !s.Rec.Removed}, nil
	}
	e, err := s.Rec.Get(m.store.TxID())
	if err != nil {
		return e, m.behind(c, i, err)
	}
	return e, nil
}

// behind adds the map and key to a BehindError.
func (m *Map[V]) behind(c *core.Call[record], i int, err error) error {
	if be, ok := err.(*state.BehindError); ok {
		cp := *be
		cp.Map, cp.Key = c.Name(), c.Key(i)
		return &cp
	}
	return err
}

// Volatile reports whether the backing map keeps its data in memory only
// (state.Volatile).
func (m *Map[V]) Volatile() bool { return m.store.Volatile() }
