package kafka_test

import (
	"context"
	"testing"
	"time"

	"github.com/squallstream/squall/spouts/kafka"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/trident"
	"github.com/squallstream/squall/trident/spout"
)

// TestEndMarkListsEndOffsets: the spout's end mark is the end offset of
// every partition that holds records; an empty partition is left out.
func TestEndMarkListsEndOffsets(t *testing.T) {
	brokers(t, func(t *testing.T, b *broker) {
		topic := b.topic(t, 3)
		b.values(t, topic, 0, 0, 12)
		b.values(t, topic, 1, 0, 3)
		sp := newSpout(t, b.spoutConfig(t, topic))
		mark, err := kafka.EndMarkOf(sp).EndMark(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		want := map[spout.Partition]int64{spout.Partition(topic + "@0"): 12, spout.Partition(topic + "@1"): 3}
		if len(mark) != len(want) || mark[spout.Partition(topic+"@0")] != 12 || mark[spout.Partition(topic+"@1")] != 3 {
			t.Fatalf("EndMark = %v, want %v", mark, want)
		}
	})
}

// TestWaitCaughtUpWithKafka: a topology counting a topic's records,
// several batches' worth, returns from Running.WaitCaughtUp with every
// record produced before the call counted in committed state, for the
// opaque and the transactional source.
func TestWaitCaughtUpWithKafka(t *testing.T) {
	brokers(t, func(t *testing.T, b *broker) {
		for _, transactional := range []bool{false, true} {
			topic := b.topic(t, 3)
			b.values(t, topic, 0, 0, 30)
			b.values(t, topic, 1, 0, 7)
			cfg := b.spoutConfig(t, topic)
			cfg.MaxRecordsPerPartition = 4
			sp := newSpout(t, cfg)
			src := sp.Opaque()
			if transactional {
				src = sp.Transactional()
			}
			tt := trident.NewTopology("caught-up")
			st := trident.PersistentAggregateGlobal(tt.NewStream("events", src), trident.OpaqueMemory[int64]("counts"), nil, countAgg{}, "count")
			r, err := tt.Submit(context.Background(), trident.Config{BatchEmitInterval: 5 * time.Millisecond, MaxBatchesInFlight: 2})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			count := func() int64 {
				t.Helper()
				got, err := trident.ReadCommitted(ctx, r, st, state.GlobalKey())
				if err != nil {
					t.Fatal(err)
				}
				return got[0].Val
			}
			if err := r.WaitCaughtUp(ctx); err != nil {
				t.Fatal(err)
			}
			if n := count(); n != 37 {
				t.Fatalf("transactional %v: %d records committed after WaitCaughtUp, want 37", transactional, n)
			}
			b.values(t, topic, 2, 0, 5)
			if err := r.WaitCaughtUp(ctx); err != nil {
				t.Fatal(err)
			}
			if n := count(); n != 42 {
				t.Fatalf("transactional %v: %d records committed after the second WaitCaughtUp, want 42", transactional, n)
			}
			if err := r.Stop(ctx); err != nil {
				t.Fatal(err)
			}
			cancel()
		}
	})
}
