package trident

import (
	"context"
	"fmt"
	"sync"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/nontransactional"
	"github.com/squallstream/squall/state/opaque"
	"github.com/squallstream/squall/state/transactional"
)

// BackingFactory opens the backing map of one partition (task) of a
// persistent aggregation. Like StateFactory it is called again when a
// worker restarts; the map it returns must show what earlier calls wrote.
// A map that implements io.Closer is not closed by the topology: its
// owner closes it after the topology stops.
type BackingFactory func(ctx context.Context, partition, numPartitions int) (state.BackingMap[[]byte], error)

// Opaque returns a factory of opaque map state over the backing maps
// newMap opens: exactly-once with transactional and opaque sources.
func Opaque[V any](name string, newMap BackingFactory) StateFactory[V] {
	return wrapBacking(newMap, func(m state.BackingMap[[]byte]) state.MapState[V] {
		return opaque.New[V](m, state.MapOptions[V]{Name: name})
	})
}

// Transactional returns a factory of transactional map state over the
// backing maps newMap opens: exactly-once only with a transactional source.
func Transactional[V any](name string, newMap BackingFactory) StateFactory[V] {
	return wrapBacking(newMap, func(m state.BackingMap[[]byte]) state.MapState[V] {
		return transactional.New[V](m, state.MapOptions[V]{Name: name})
	})
}

// NonTransactional returns a factory of non-transactional map state over
// the backing maps newMap opens: replays are counted again (at-least-once).
func NonTransactional[V any](name string, newMap BackingFactory) StateFactory[V] {
	return wrapBacking(newMap, func(m state.BackingMap[[]byte]) state.MapState[V] {
		return nontransactional.New[V](m, state.MapOptions[V]{Name: name})
	})
}

func wrapBacking[V any](newMap BackingFactory, wrap func(state.BackingMap[[]byte]) state.MapState[V]) StateFactory[V] {
	return func(ctx context.Context, partition, numPartitions int) (state.MapState[V], error) {
		m, err := newMap(ctx, partition, numPartitions)
		if err != nil {
			return nil, err
		}
		return wrap(m), nil
	}
}

// OpaqueMemory returns a factory of opaque map state kept in memory, one
// backing map per partition, that survives worker restarts (but not the
// process).
func OpaqueMemory[V any](name string) StateFactory[V] {
	return Opaque[V](name, MemoryBacking(name))
}

// TransactionalMemory is OpaqueMemory with transactional state, which is
// exactly-once only with a transactional source.
func TransactionalMemory[V any](name string) StateFactory[V] {
	return Transactional[V](name, MemoryBacking(name))
}

// NonTransactionalMemory is OpaqueMemory with non-transactional state:
// replays are counted again (at-least-once).
func NonTransactionalMemory[V any](name string) StateFactory[V] {
	return NonTransactional[V](name, MemoryBacking(name))
}

// MemoryBacking returns a BackingFactory of in-memory maps, one per
// partition, kept for the life of the factory (across worker restarts,
// and shared by every topology submitted with it). The maps are fenced:
// opening one for a newer owner generation rejects every later write of
// the older ones (see docs/coordinator.md).
func MemoryBacking(name string) BackingFactory {
	var mu sync.Mutex
	maps := map[int]*state.Memory{}
	return func(ctx context.Context, partition, _ int) (state.BackingMap[[]byte], error) {
		mu.Lock()
		defer mu.Unlock()
		m := maps[partition]
		if m == nil {
			m = state.NewMemory(fmt.Sprintf("%s/%d", name, partition))
			maps[partition] = m
		}
		if err := m.Admit(ctx); err != nil {
			return nil, err
		}
		return m, nil
	}
}
