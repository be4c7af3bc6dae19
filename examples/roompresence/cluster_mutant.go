//go:build roompresence_mutant

package main

import (
	"context"

	"github.com/squallstream/squall/examples/roompresence/room"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/opaque"
	"github.com/squallstream/squall/trident"
)

// clusterTimelines, in the mutant build only (go build -tags
// roompresence_mutant), breaks exactly-once on purpose for the mutation
// check of the cluster test: reads of room_timelines report every stored
// value as written by no batch (txid 0), so the opaque map takes a replay
// of a batch whose writes landed before a kill for a new batch and counts
// it again. TestClusterThroughFaults must then fail with mismatches.
func clusterTimelines(f trident.BackingFactory) trident.BackingFactory {
	return func(ctx context.Context, partition, n int) (state.BackingMap[[]byte], error) {
		m, err := f(ctx, partition, n)
		if err != nil {
			return nil, err
		}
		return forgetfulMap{m}, nil
	}
}

type forgetfulMap struct{ state.BackingMap[[]byte] }

func (m forgetfulMap) MultiGet(ctx context.Context, keys []state.Key) ([]state.Entry[[]byte], error) {
	got, err := m.BackingMap.MultiGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	for i, e := range got {
		if !e.Found {
			continue
		}
		v, err := opaque.Decode[room.Timeline](e.Val, nil)
		if err != nil {
			return nil, err
		}
		v.TxID = 0
		if got[i].Val, err = opaque.Encode(v, nil); err != nil {
			return nil, err
		}
	}
	return got, nil
}
