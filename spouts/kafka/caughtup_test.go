package kafka_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/squallstream/squall/spouts/kafka"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// TestCaughtUp compares a rebuild's positions with the live topology's.
func TestCaughtUp(t *testing.T) {
	for _, c := range []struct {
		rebuild, live map[int]int64
		ok            bool
		behind        map[int]int64
	}{
		{map[int]int64{0: 10, 1: 5}, map[int]int64{0: 10, 1: 4}, true, map[int]int64{}},
		{map[int]int64{0: 10, 1: 3}, map[int]int64{0: 10, 1: 5}, false, map[int]int64{1: 2}},
		{map[int]int64{0: -1}, map[int]int64{0: 7, 1: 2}, false, map[int]int64{0: 7, 1: 2}},
		{map[int]int64{}, map[int]int64{0: -1, 1: 0}, true, map[int]int64{}},
	} {
		ok, behind := kafka.CaughtUp(c.rebuild, c.live)
		if ok != c.ok || !maps.Equal(behind, c.behind) {
			t.Errorf("CaughtUp(%v, %v) = %v, %v; want %v, %v", c.rebuild, c.live, ok, behind, c.ok, c.behind)
		}
	}
}

// TestMirroredOffsets reads where two topologies' committed batches end
// from their mirror groups: the one behind is not caught up until it
// commits as far.
func TestMirroredOffsets(t *testing.T) {
	brokers(t, func(t *testing.T, b *broker) {
		topic := b.topic(t, 1)
		b.values(t, topic, 0, 0, 15)
		run := func(name string, batches int) kafka.Config {
			cfg := b.spoutConfig(t, topic)
			cfg.Topology, cfg.MirrorInterval = name, 10*time.Millisecond
			cfg.MaxRecordsPerPartition = 5
			e := newSpout(t, cfg).NewEmitter(0)
			var prev *kafka.Meta
			for txid := txn.TxID(1); txid <= txn.TxID(batches); txid++ {
				m, _ := emit(t, e, txid, part(topic, 0), prev)
				prev = &m
				if err := e.(spout.Committer).Committed(context.Background(), txid); err != nil {
					t.Fatal(err)
				}
			}
			waitMirroredAt(t, b, name, topic, int64(5*batches), txn.TxID(batches))
			return cfg
		}
		liveCfg := run(t.Name()+"-live", 3)
		rebuildCfg := run(t.Name()+"-rebuild", 1)
		ctx := context.Background()
		live, err := kafka.MirroredOffsets(ctx, liveCfg, liveCfg.Topology, topic)
		if err != nil || live[0] != 15 {
			t.Fatalf("live offsets = %v, %v; want 15", live, err)
		}
		rebuild, err := kafka.MirroredOffsets(ctx, rebuildCfg, rebuildCfg.Topology, topic)
		if err != nil || rebuild[0] != 5 {
			t.Fatalf("rebuild offsets = %v, %v; want 5", rebuild, err)
		}
		if ok, behind := kafka.CaughtUp(rebuild, live); ok || behind[0] != 10 {
			t.Fatalf("CaughtUp = %v, %v; want 10 behind on partition 0", ok, behind)
		}
		if none, err := kafka.MirroredOffsets(ctx, liveCfg, t.Name()+"-nobody", topic); err != nil || none[0] != -1 {
			t.Fatalf("a group that committed nothing: %v, %v; want -1", none, err)
		}
	})
}
