package trident

import (
	"context"
	"fmt"
	"sync"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/bolt"
)

// OpaqueBolt returns a factory of opaque map state kept durably in the
// bbolt file at path (created if needed), one bucket per partition named
// "<name>/<partition>": exactly-once with transactional and opaque sources,
// across restarts of the process. See BoltBacking for sharing and fencing.
func OpaqueBolt[V any](path, name string) StateFactory[V] {
	return Opaque[V](name, BoltBacking(path, name, bolt.Options{}))
}

// TransactionalBolt is OpaqueBolt with transactional state, which is
// exactly-once only with a transactional source.
func TransactionalBolt[V any](path, name string) StateFactory[V] {
	return Transactional[V](name, BoltBacking(path, name, bolt.Options{}))
}

// NonTransactionalBolt is OpaqueBolt with non-transactional state: replays
// are counted again (at-least-once).
func NonTransactionalBolt[V any](path, name string) StateFactory[V] {
	return NonTransactional[V](name, BoltBacking(path, name, bolt.Options{}))
}

// BoltBacking returns a BackingFactory of bbolt maps in the file at path,
// one bucket per partition ("<name>/<partition>"; opts.Bucket is ignored,
// the other options apply when the file is opened).
//
// Every partition, and every state of the process in the same file,
// shares one open file (bolt.OpenShared): bbolt locks a file per process,
// so opening it once per partition would wait on its own lock. The file
// stays open while the factory's maps are open: the topology does not
// close them, so it stays open for the life of the process (another
// process opening it waits for the lock, up to opts.LockTimeout).
//
// The maps are fenced: opening one for an owner generation (the runtime
// opens state with state.WithFence) records the generation in the file,
// and every later write of an older generation of the same owner fails
// with a *state.FencedError, in this process or a later one (see
// bolt.FenceBucket and docs/coordinator.md).
func BoltBacking(path, name string, opts bolt.Options) BackingFactory {
	var mu sync.Mutex
	maps := map[int]*bolt.Map{}
	return func(ctx context.Context, partition, _ int) (state.BackingMap[[]byte], error) {
		mu.Lock()
		defer mu.Unlock()
		m := maps[partition]
		if m == nil {
			o := opts
			o.Bucket = fmt.Sprintf("%s/%d", name, partition)
			var err error
			if m, err = bolt.OpenShared(path, o); err != nil {
				return nil, err
			}
			maps[partition] = m
		}
		if err := m.Admit(ctx); err != nil {
			return nil, err
		}
		return m, nil
	}
}
