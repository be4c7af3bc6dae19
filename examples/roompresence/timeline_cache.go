package main

import (
	"context"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/trident"
)

// timelineCacheSize bounds the room hours each timeline task keeps in
// memory: far more than a day's (rooms × 24), so a task reads a room hour
// from the store only the first time it sees it.
const timelineCacheSize = 10_000

// cachedBacking puts a state.LRU of size entries in front of each backing
// map open opens, so that the opaque map reads a room hour it wrote from
// memory instead of the store. That is correct because each map serves
// its own partition of the keys and is their only writer: the trident
// runtime opens a new map (so a new, empty cache) for every task start,
// worker restart and process, which then reads what is stored, and a
// superseded process's writes are fenced off. The LRU forgets the keys of
// a failed write, which a replay then reads again.
func cachedBacking(open trident.BackingFactory, size int) trident.BackingFactory {
	return func(ctx context.Context, partition, numPartitions int) (state.BackingMap[[]byte], error) {
		m, err := open(ctx, partition, numPartitions)
		if err != nil {
			return nil, err
		}
		cached, err := state.NewLRU(m, size)
		if err != nil {
			_ = state.Close(m)
			return nil, err
		}
		return cached, nil
	}
}
