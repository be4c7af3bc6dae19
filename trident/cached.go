package trident

import (
	"context"

	"github.com/squallstream/squall/state"
)

// Cached returns a factory of the maps newMap opens, each behind a
// state.LRU of at most size entries (Storm's CachedMap): an opaque or
// transactional update of a key the cache holds is the store's write
// alone, without its read. The cache must be the only writer of its keys,
// which a persistent aggregation's partition is: fields grouping sends a
// key to one partition, a restarted worker opens a new map and cache, and
// the writes of a superseded owner are fenced. Do not share the keys with
// another topology or a tool that writes them. A size below 1 fails the
// factory's calls.
func Cached(size int, newMap BackingFactory) BackingFactory {
	return func(ctx context.Context, partition, numPartitions int) (state.BackingMap[[]byte], error) {
		m, err := newMap(ctx, partition, numPartitions)
		if err != nil {
			return nil, err
		}
		lru, err := state.NewLRU(m, size)
		if err != nil {
			return nil, err
		}
		return lru, nil
	}
}
