package state

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"sync"
)

// Memory is an in-process BackingMap[[]byte] for unit tests and demos. It
// copies values on the way in and out, so callers can never alias what it
// holds. It is safe for concurrent use and loses everything when the
// process ends; the embedded durable default is package state/bolt.
type Memory struct {
	mu    sync.RWMutex
	name  string
	data  map[string][]byte
	fence Fencer
}

var (
	_ BackingMap[[]byte] = (*Memory)(nil)
	_ Concurrent         = (*Memory)(nil)
	_ Named              = (*Memory)(nil)
	_ Deleter            = (*Memory)(nil)
	_ KeyLister          = (*Memory)(nil)
)

// NewMemory returns an empty memory map. name identifies it in errors;
// empty means "memory".
func NewMemory(name string) *Memory {
	if name == "" {
		name = "memory"
	}
	return &Memory{name: name, data: make(map[string][]byte)}
}

// MultiGet returns copies of the stored values.
func (m *Memory) MultiGet(ctx context.Context, keys []Key) ([]Entry[[]byte], error) {
	if err := ctx.Err(); err != nil {
		return nil, Transient(err)
	}
	out := make([]Entry[[]byte], len(keys))
	m.mu.RLock()
	defer m.mu.RUnlock()
	for i, k := range keys {
		if v, ok := m.data[k.Encoded()]; ok {
			out[i] = Entry[[]byte]{Val: clone(v), Found: true}
		}
	}
	return out, nil
}

// Admit records the fence ctx carries (see WithFence): from then on,
// writes of older generations of its owner are rejected. Factories of
// fenced state call it when they open the map for a new owner.
func (m *Memory) Admit(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.fence.Admit(ctx, m.name)
}

// MultiPut stores copies of vals; it is atomic with respect to other calls.
// A write whose context carries the fence of a superseded owner (see
// WithFence) is rejected with a *FencedError and stores nothing.
func (m *Memory) MultiPut(ctx context.Context, keys []Key, vals [][]byte) error {
	if len(keys) != len(vals) {
		return ErrLength
	}
	if err := ctx.Err(); err != nil {
		return Transient(err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.fence.Admit(ctx, m.name); err != nil {
		return err
	}
	for i, k := range keys {
		m.data[k.Encoded()] = clone(vals[i])
	}
	return nil
}

// MultiDelete deletes the keys; it is atomic with respect to other calls
// and fenced like MultiPut.
func (m *Memory) MultiDelete(ctx context.Context, keys []Key) error {
	if err := ctx.Err(); err != nil {
		return Transient(err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.fence.Admit(ctx, m.name); err != nil {
		return err
	}
	for _, k := range keys {
		delete(m.data, k.Encoded())
	}
	return nil
}

// Keys yields the stored keys in the order of their encodings, as of
// the start of the range (KeyLister).
func (m *Memory) Keys(ctx context.Context) iter.Seq2[Key, error] {
	return func(yield func(Key, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(Key{}, Transient(err))
			return
		}
		m.mu.RLock()
		encs := make([]string, 0, len(m.data))
		for enc := range m.data {
			encs = append(encs, enc)
		}
		m.mu.RUnlock()
		slices.Sort(encs)
		for _, enc := range encs {
			k, err := DecodeKey([]byte(enc))
			if err != nil {
				err = fmt.Errorf("state: %s: stored key: %w", m.name, err)
			}
			if !yield(k, err) || err != nil {
				return
			}
		}
	}
}

// Len returns the number of stored keys.
func (m *Memory) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.data)
}

// Name returns the name given to NewMemory.
func (m *Memory) Name() string { return m.name }

// ConcurrentSafe reports true.
func (m *Memory) ConcurrentSafe() bool { return true }

// clone copies b, keeping a non-nil empty slice for an empty value.
func clone(b []byte) []byte { return append(make([]byte, 0, len(b)), b...) }
