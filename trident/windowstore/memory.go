package windowstore

import (
	"context"
	"slices"
	"sync"

	"github.com/squallstream/squall/txn"
)

// Memory is a Store in memory. The zero value is ready to use. Records
// survive a worker restart within the process (keep the Memory outside
// the topology), not a process restart.
type Memory struct {
	mu   sync.Mutex
	recs map[string]map[txn.TxID][]byte
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty Memory.
func NewMemory() *Memory { return &Memory{} }

// Get implements Store.
func (m *Memory) Get(ctx context.Context, id string, txid txn.TxID) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.recs[id][txid]
	if !ok {
		return nil, ErrNotFound
	}
	return slices.Clone(r), nil
}

// Last implements Store.
func (m *Memory) Last(ctx context.Context, id string, before txn.TxID) (txn.TxID, []byte, error) {
	if err := ctx.Err(); err != nil {
		return 0, nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var best txn.TxID
	found := false
	for t := range m.recs[id] {
		if t < before && (!found || t > best) {
			best, found = t, true
		}
	}
	if !found {
		return 0, nil, ErrNotFound
	}
	return best, slices.Clone(m.recs[id][best]), nil
}

// Put implements Store.
func (m *Memory) Put(ctx context.Context, id string, txid txn.TxID, record []byte, prune txn.TxID) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.recs == nil {
		m.recs = map[string]map[txn.TxID][]byte{}
	}
	recs := m.recs[id]
	if recs == nil {
		recs = map[txn.TxID][]byte{}
		m.recs[id] = recs
	}
	recs[txid] = slices.Clone(record)
	for t := range recs {
		if t < prune {
			delete(recs, t)
		}
	}
	return nil
}

// Remove implements Store.
func (m *Memory) Remove(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.recs, id)
	return nil
}

// Len returns the number of records of id, for tests of pruning.
func (m *Memory) Len(id string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.recs[id])
}
