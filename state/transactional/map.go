package transactional

import (
	"context"
	"sync"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/internal/core"
	"github.com/squallstream/squall/state/internal/wire"
	"github.com/squallstream/squall/txn"
)

// record is a stored transactional value with the user value still
// encoded; Removed marks a tombstone (the batch TxID removed the key).
type record struct {
	TxID    txn.TxID
	Val     []byte
	Removed bool
}

var format = core.Format[record]{
	Append: func(dst []byte, r record) []byte {
		return wire.AppendTransactional(dst, wire.Transactional{TxID: uint64(r.TxID), Val: r.Val, Removed: r.Removed})
	},
	Parse: func(b []byte) (record, error) {
		t, err := wire.ParseTransactional(b)
		return record{TxID: txn.TxID(t.TxID), Val: t.Val, Removed: t.Removed}, err
	},
	Removed: func(r record) bool { return r.Removed },
}

// stored picks the stored user value of keys[i], for core.Get: absent for
// a tombstone.
func stored(c *core.Call[record], i int) (state.Entry[[]byte], error) {
	s := c.Slot(i)
	return state.Entry[[]byte]{Val: s.Rec.Val, Found: s.Found && !s.Rec.Removed}, nil
}

// Map is a transactional MapState over a backing map (Storm's
// TransactionalMap). Within BeginCommit(T) … Commit(T), MultiUpdate does,
// for each key in order:
//
//   - absent key: store {T, updater(no value)};
//   - key stored by T and not written in this commit (a replay): skip,
//     return the stored value, write nothing;
//   - key stored by a batch after T: *state.BehindError (Storm overwrites
//     silently; a later txid in the store means it belongs to another
//     stream);
//   - otherwise: store {T, updater(stored value)}.
//
// A tombstone {T', removed} reads as absent, except that a tombstone of T
// itself, not written in this commit, is a replay: skipped like a value.
//
// Only changed keys are written, in one MultiPut. MultiPut stores {T, v}
// unconditionally, and MultiRemove (state.Remover) the tombstone
// {T, removed}, as Storm's TransactionalMap stores {T, null}: a replay of
// T, identical by the transactional contract, writes the same tombstone
// again. The tombstones of batch T are deleted from a backing map that
// can delete (state.Deleter) when a later batch begins. Map is safe for
// concurrent use; calls are serialized.
type Map[V any] struct {
	mu    sync.Mutex
	codec state.Codec[V]
	store core.Store[record]
}

var _ state.RemovableMapState[int] = (*Map[int])(nil)

// New returns a transactional map storing its values in m.
func New[V any](m state.BackingMap[[]byte], opts state.MapOptions[V]) *Map[V] {
	return &Map[V]{codec: opts.CodecOrDefault(), store: core.NewStore(m, opts.Name, format, true)}
}

// BeginCommit starts batch txid and empties the per-commit read cache.
// Beginning a later txid first deletes the tombstones the last commit
// left, if the backing map can delete.
func (m *Map[V]) BeginCommit(ctx context.Context, txid txn.TxID) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.store.Begin(ctx, txid)
}

// Commit ends batch txid.
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

// MultiGet returns the stored values.
func (m *Map[V]) MultiGet(ctx context.Context, keys []state.Key) ([]state.Entry[V], error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return core.Get(ctx, &m.store, keys, m.codec, stored)
}

// MultiUpdate applies the updaters as described on Map and returns the
// values of the keys afterwards (the stored value for skipped keys).
func (m *Map[V]) MultiUpdate(ctx context.Context, keys []state.Key, updaters []state.ValueUpdater[V]) ([]V, error) {
	if len(keys) != len(updaters) {
		return nil, state.ErrLength
	}
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
		s := c.Slot(i)
		var old V
		if s.Found {
			if s.Rec.TxID > tx {
				return nil, &state.BehindError{Map: c.Name(), Key: c.Key(i), Batch: tx, Stored: s.Rec.TxID}
			}
			if s.Rec.Removed {
				if s.Rec.TxID == tx && !s.Cached {
					continue // removed before this replay: out[i] stays zero
				}
				s.Found = false
			} else if old, s.Found, err = core.Decode(ctx, c, i, m.codec, s.Rec.Val); err != nil {
				// s.Found turns false if the corrupt handler takes the value.
				return nil, err
			}
			if s.Found && s.Rec.TxID == tx && !s.Cached {
				out[i] = old // applied before this replay
				continue
			}
		}
		nv := updaters[i].Update(old, s.Found)
		raw, err := core.Encode(m.codec, nv)
		if err != nil {
			return nil, err
		}
		c.Set(i, record{TxID: tx, Val: raw})
		out[i] = nv
	}
	if err := c.Flush(ctx); err != nil {
		return nil, err
	}
	return out, nil
}

// MultiPut stores {T, vals[i]} for every key.
func (m *Map[V]) MultiPut(ctx context.Context, keys []state.Key, vals []V) error {
	if len(keys) != len(vals) {
		return state.ErrLength
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	tx := m.store.TxID()
	if tx == 0 {
		return state.ErrNoTxID
	}
	c := m.store.Blind(keys)
	for i, v := range vals {
		raw, err := core.Encode(m.codec, v)
		if err != nil {
			return err
		}
		c.Set(i, record{TxID: tx, Val: raw})
	}
	return c.Flush(ctx)
}

// MultiRemove stores the tombstone {T, removed} for every key: from then
// on the keys read as absent.
func (m *Map[V]) MultiRemove(ctx context.Context, keys []state.Key) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	tx := m.store.TxID()
	if tx == 0 {
		return state.ErrNoTxID
	}
	c := m.store.Blind(keys)
	for i := range keys {
		c.Set(i, record{TxID: tx, Removed: true})
	}
	return c.Flush(ctx)
}

// Volatile reports whether the backing map keeps its data in memory only
// (state.Volatile).
func (m *Map[V]) Volatile() bool { return m.store.Volatile() }
