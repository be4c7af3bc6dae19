package state

import (
	"context"
	"fmt"
	"iter"
	"sync"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// LRU is a read-through, write-through cache of at most Size entries in
// front of a BackingMap (Storm's CachedMap). Put it under an opaque or
// transactional map to save the store read of hot keys (the recency list
// is hashicorp/golang-lru/v2's simplelru, under LRU's own lock):
//
//	opaque.New(state.NewLRU(store, 10000), opts)
//
// It caches absent keys too, so it must be the only writer of the keys it
// serves. After a failed MultiPut it forgets every key of the call, since
// the store may hold any subset of them.
//
// LRU's own state is safe for concurrent use: MultiGet calls run in
// parallel, MultiPut calls are serialized so that the cache and the store
// always agree on the last write. It calls the wrapped map from several
// goroutines only if that map is itself Concurrent, and reports the wrapped
// map's answer from ConcurrentSafe.
type LRU[V any] struct {
	m BackingMap[V]

	putMu sync.Mutex // serializes MultiPut and MultiDelete

	mu     sync.Mutex                       // guards the fields below
	cache  *simplelru.LRU[string, Entry[V]] // by encoded key
	gen    uint64                           // changes at the start and end of every put
	hits   uint64
	misses uint64
}

// NewLRU returns a cache of at most size entries in front of m.
func NewLRU[V any](m BackingMap[V], size int) (*LRU[V], error) {
	if size < 1 {
		return nil, fmt.Errorf("state: LRU size %d: must be at least 1", size)
	}
	cache, err := simplelru.NewLRU[string, Entry[V]](size, nil)
	if err != nil {
		return nil, fmt.Errorf("state: LRU size %d: %w", size, err)
	}
	return &LRU[V]{m: m, cache: cache}, nil
}

// MultiGet serves cached keys from memory and reads the others, once each,
// from the wrapped map.
func (l *LRU[V]) MultiGet(ctx context.Context, keys []Key) ([]Entry[V], error) {
	if err := ctx.Err(); err != nil {
		return nil, Transient(err)
	}
	out := make([]Entry[V], len(keys))
	var (
		missKeys []Key
		missAt   map[string][]int // encoded key -> indexes in keys
	)
	l.mu.Lock()
	for i, k := range keys {
		enc := k.Encoded()
		if e, ok := l.cache.Get(enc); ok {
			out[i] = e
			l.hits++
			continue
		}
		if missAt == nil {
			missAt = make(map[string][]int)
		}
		if _, seen := missAt[enc]; !seen {
			missKeys = append(missKeys, k)
		}
		missAt[enc] = append(missAt[enc], i)
	}
	l.misses += uint64(len(missKeys))
	gen := l.gen
	l.mu.Unlock()
	if len(missKeys) == 0 {
		return out, nil
	}

	got, err := l.m.MultiGet(ctx, missKeys)
	if err != nil {
		return nil, err
	}
	if len(got) != len(missKeys) {
		return nil, fmt.Errorf("state: %s: get of %d keys returned %d entries", NameOf(l.m), len(missKeys), len(got))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	fill := l.gen == gen // no put overlapped the read: the values are current
	for j, k := range missKeys {
		enc := k.Encoded()
		for _, i := range missAt[enc] {
			out[i] = got[j]
		}
		if fill {
			l.cache.Add(enc, got[j])
		}
	}
	return out, nil
}

// MultiPut writes through to the wrapped map, then caches the values.
func (l *LRU[V]) MultiPut(ctx context.Context, keys []Key, vals []V) error {
	if len(keys) != len(vals) {
		return ErrLength
	}
	l.putMu.Lock()
	defer l.putMu.Unlock()
	l.mu.Lock()
	l.gen++
	l.mu.Unlock()

	err := l.m.MultiPut(ctx, keys, vals)

	l.mu.Lock()
	defer l.mu.Unlock()
	l.gen++
	if err != nil {
		for _, k := range keys {
			l.cache.Remove(k.Encoded())
		}
		return err
	}
	for i, k := range keys {
		l.cache.Add(k.Encoded(), Entry[V]{Val: vals[i], Found: true}) // evicts beyond the size
	}
	return nil
}

// MultiDelete deletes the keys from the wrapped map if it is a Deleter
// (ErrNoDelete otherwise, changing nothing), then caches them as absent.
// After a failed delete it forgets every key of the call.
func (l *LRU[V]) MultiDelete(ctx context.Context, keys []Key) error {
	d, ok := l.m.(Deleter)
	if !ok {
		return fmt.Errorf("%w: %s", ErrNoDelete, NameOf(l.m))
	}
	l.putMu.Lock()
	defer l.putMu.Unlock()
	l.mu.Lock()
	l.gen++
	l.mu.Unlock()

	err := d.MultiDelete(ctx, keys)

	l.mu.Lock()
	defer l.mu.Unlock()
	l.gen++
	for _, k := range keys {
		if err != nil {
			l.cache.Remove(k.Encoded())
		} else {
			l.cache.Add(k.Encoded(), Entry[V]{})
		}
	}
	return err
}

// CanDelete implements DeleteForwarder: whether the wrapped map can
// delete.
func (l *LRU[V]) CanDelete() bool { return CanDelete(l.m) }

// Len returns the number of cached entries; it never exceeds the size.
func (l *LRU[V]) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cache.Len()
}

// Stats returns how many key lookups were served from the cache and how
// many went to the wrapped map.
func (l *LRU[V]) Stats() (hits, misses uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.hits, l.misses
}

// Name returns the wrapped map's name.
func (l *LRU[V]) Name() string { return NameOf(l.m) }

// ConcurrentSafe reports whether the wrapped map is safe for concurrent
// use.
func (l *LRU[V]) ConcurrentSafe() bool { return IsConcurrent(l.m) }

// Close closes the wrapped map if it can be closed.
func (l *LRU[V]) Close() error { return Close(l.m) }

// Keys yields the keys of the wrapped map, if it is a KeyLister (see
// ListKeys): LRU writes through, so the wrapped map holds every key.
func (l *LRU[V]) Keys(ctx context.Context) iter.Seq2[Key, error] { return ListKeys(ctx, l.m) }
