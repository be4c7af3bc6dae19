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

// OpaqueMemory returns a factory of opaque map state kept in memory, one
// backing map per partition, that survives worker restarts (but not the
// process).
func OpaqueMemory[V any](name string) StateFactory[V] {
	return memoryFactory(name, func(m state.BackingMap[[]byte]) state.MapState[V] {
		return opaque.New[V](m, state.MapOptions[V]{Name: name})
	})
}

// TransactionalMemory is OpaqueMemory with transactional state, which is
// exactly-once only with a transactional source.
func TransactionalMemory[V any](name string) StateFactory[V] {
	return memoryFactory(name, func(m state.BackingMap[[]byte]) state.MapState[V] {
		return transactional.New[V](m, state.MapOptions[V]{Name: name})
	})
}

// NonTransactionalMemory is OpaqueMemory with non-transactional state:
// replays are counted again (at-least-once).
func NonTransactionalMemory[V any](name string) StateFactory[V] {
	return memoryFactory(name, func(m state.BackingMap[[]byte]) state.MapState[V] {
		return nontransactional.New[V](m, state.MapOptions[V]{Name: name})
	})
}

func memoryFactory[V any](name string, wrap func(state.BackingMap[[]byte]) state.MapState[V]) StateFactory[V] {
	var mu sync.Mutex
	maps := map[int]*state.Memory{}
	return func(_ context.Context, partition, _ int) (state.MapState[V], error) {
		mu.Lock()
		defer mu.Unlock()
		m := maps[partition]
		if m == nil {
			m = state.NewMemory(fmt.Sprintf("%s/%d", name, partition))
			maps[partition] = m
		}
		return wrap(m), nil
	}
}
