package main

import (
	"context"
	"fmt"

	"github.com/squallstream/squall/examples/roompresence/room"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/opaque"
	"github.com/squallstream/squall/trident"
	"github.com/squallstream/squall/trident/coordstore"
)

// Store is where the example keeps its results and its batch coordination:
// the embedded store (bbolt files) or Cassandra.
type Store interface {
	Presence
	// Timelines opens the backing map of the room_timelines opaque map.
	Timelines() trident.BackingFactory
	// Coordination is the store of the batch coordinator and the spout.
	Coordination() coordstore.Store
	// ScanPresence calls fn for every row of the presence table.
	ScanPresence(ctx context.Context, fn func(room.Period) error) error
	// TimelineKeys returns the key of every stored room hour.
	TimelineKeys(ctx context.Context) ([]state.Key, error)
	// Version is the version of the result tables (1 for the embedded
	// store): the topology of version v runs as VersionedName(topologyName, v).
	Version() int
	Close() error
}

// topologyName names the topology, its coordination state and the
// version pointer of its result tables.
const topologyName = "roompresence"

// readTimelines returns the committed timelines of keys (absent ones are
// zero, with found false).
func readTimelines(ctx context.Context, st Store, keys []state.Key) ([]state.Entry[room.Timeline], error) {
	m, err := st.Timelines()(ctx, 0, 1)
	if err != nil {
		return nil, err
	}
	out := make([]state.Entry[room.Timeline], 0, len(keys))
	const chunk = 512
	view := opaque.New[room.Timeline](m, state.MapOptions[room.Timeline]{Name: timelineMap})
	for len(keys) > 0 {
		n := min(chunk, len(keys))
		got, err := view.MultiGet(ctx, keys[:n])
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", timelineMap, err)
		}
		out = append(out, got...)
		keys = keys[n:]
	}
	return out, nil
}
