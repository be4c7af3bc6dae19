package coordstore

import (
	"cmp"
	"context"
	"slices"
	"sync"

	"github.com/squallstream/squall/txn"
)

// Memory is a Store in memory, safe for concurrent use. It is for tests
// and for topologies that need no recovery across processes: its data is
// lost with the process.
type Memory struct {
	mu     sync.RWMutex
	closed bool
	coords map[string]memRecord
	gens   map[string]Generation
	metas  map[Key][]Entry // sorted by TxID
}

type memRecord struct {
	rec Record
	v   Version
}

// NewMemory returns an empty Memory store.
func NewMemory() *Memory {
	return &Memory{coords: map[string]memRecord{}, gens: map[string]Generation{}, metas: map[Key][]Entry{}}
}

var _ Store = (*Memory)(nil)

// begin checks the context and that the store is open; it returns with the
// lock held (write lock if w) when the error is nil.
func (m *Memory) begin(ctx context.Context, w bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if w {
		m.mu.Lock()
	} else {
		m.mu.RLock()
	}
	if m.closed {
		m.end(w)
		return ErrClosed
	}
	return nil
}

func (m *Memory) end(w bool) {
	if w {
		m.mu.Unlock()
	} else {
		m.mu.RUnlock()
	}
}

// Acquire implements Store.
func (m *Memory) Acquire(ctx context.Context, owner string) (Generation, error) {
	if err := ValidateStream(owner); err != nil {
		return 0, err
	}
	if err := m.begin(ctx, true); err != nil {
		return 0, err
	}
	defer m.end(true)
	m.gens[owner]++
	return m.gens[owner], nil
}

// Generation implements Store.
func (m *Memory) Generation(ctx context.Context, owner string) (Generation, error) {
	if err := ValidateStream(owner); err != nil {
		return 0, err
	}
	if err := m.begin(ctx, false); err != nil {
		return 0, err
	}
	defer m.end(false)
	return m.gens[owner], nil
}

// beginWrite validates f and begins a write by it (see begin): it returns
// with the write lock held when the error is nil, which it is only if f
// is the newest generation of its owner; where names what is written.
func (m *Memory) beginWrite(ctx context.Context, where string, f Fence) error {
	if err := ValidateFence(f); err != nil {
		return err
	}
	if err := m.begin(ctx, true); err != nil {
		return err
	}
	if cur := m.gens[f.Owner]; cur != f.Generation {
		m.end(true)
		return Fenced(where, f, cur)
	}
	return nil
}

// LoadCoordinator implements Store.
func (m *Memory) LoadCoordinator(ctx context.Context, stream string) (Record, Version, error) {
	if err := ValidateStream(stream); err != nil {
		return Record{}, 0, err
	}
	if err := m.begin(ctx, false); err != nil {
		return Record{}, 0, err
	}
	defer m.end(false)
	r := m.coords[stream]
	return r.rec.Clone(), r.v, nil
}

// SwapCoordinator implements Store.
func (m *Memory) SwapCoordinator(ctx context.Context, f Fence, old Version, rec Record) (Version, error) {
	if err := m.beginWrite(ctx, "coordinator of "+f.Owner, f); err != nil {
		return 0, err
	}
	defer m.end(true)
	cur := m.coords[f.Owner]
	if cur.v != old {
		return 0, &ConflictError{Stream: f.Owner, Want: old, Have: cur.v}
	}
	m.coords[f.Owner] = memRecord{rec: rec.Clone(), v: cur.v + 1}
	return cur.v + 1, nil
}

// search returns the index of the first entry of es at or after txid.
func search(es []Entry, txid txn.TxID) int {
	i, _ := slices.BinarySearchFunc(es, txid, func(e Entry, t txn.TxID) int { return cmp.Compare(e.TxID, t) })
	return i
}

// GetMeta implements Store.
func (m *Memory) GetMeta(ctx context.Context, k Key, txid txn.TxID) ([]byte, bool, error) {
	if err := k.Validate(); err != nil {
		return nil, false, err
	}
	if err := m.begin(ctx, false); err != nil {
		return nil, false, err
	}
	defer m.end(false)
	es := m.metas[k]
	if i := search(es, txid); i < len(es) && es[i].TxID == txid {
		return slices.Clone(es[i].Value), true, nil
	}
	return nil, false, nil
}

// PrevMeta implements Store.
func (m *Memory) PrevMeta(ctx context.Context, k Key, txid txn.TxID) (Entry, bool, error) {
	if err := k.Validate(); err != nil {
		return Entry{}, false, err
	}
	if err := m.begin(ctx, false); err != nil {
		return Entry{}, false, err
	}
	defer m.end(false)
	es := m.metas[k]
	i := search(es, txid)
	if i == 0 {
		return Entry{}, false, nil
	}
	e := es[i-1]
	return Entry{TxID: e.TxID, Value: slices.Clone(e.Value)}, true, nil
}

// PutMeta implements Store.
func (m *Memory) PutMeta(ctx context.Context, gen Generation, k Key, txid txn.TxID, value []byte) error {
	if err := k.Validate(); err != nil {
		return err
	}
	if err := ValidateTxID(txid); err != nil {
		return err
	}
	if err := m.beginWrite(ctx, "meta of "+k.String(), k.Fence(gen)); err != nil {
		return err
	}
	defer m.end(true)
	es := m.metas[k]
	e := Entry{TxID: txid, Value: slices.Clone(value)}
	if i := search(es, txid); i < len(es) && es[i].TxID == txid {
		es[i] = e
	} else {
		m.metas[k] = slices.Insert(es, i, e)
	}
	return nil
}

// RemoveMeta implements Store.
func (m *Memory) RemoveMeta(ctx context.Context, gen Generation, k Key, txid txn.TxID) error {
	if err := k.Validate(); err != nil {
		return err
	}
	if err := m.beginWrite(ctx, "meta of "+k.String(), k.Fence(gen)); err != nil {
		return err
	}
	defer m.end(true)
	es := m.metas[k]
	if i := search(es, txid); i < len(es) && es[i].TxID == txid {
		m.set(k, slices.Delete(es, i, i+1))
	}
	return nil
}

// CleanupMetaBefore implements Store.
func (m *Memory) CleanupMetaBefore(ctx context.Context, gen Generation, k Key, txid txn.TxID) error {
	if err := k.Validate(); err != nil {
		return err
	}
	if err := m.beginWrite(ctx, "meta of "+k.String(), k.Fence(gen)); err != nil {
		return err
	}
	defer m.end(true)
	es := m.metas[k]
	if i := search(es, txid); i > 0 {
		m.set(k, slices.Delete(es, 0, i))
	}
	return nil
}

func (m *Memory) set(k Key, es []Entry) {
	if len(es) == 0 {
		delete(m.metas, k)
		return
	}
	m.metas[k] = es
}

// Close implements Store. The data is dropped.
func (m *Memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	m.coords, m.gens, m.metas = nil, nil, nil
	return nil
}
