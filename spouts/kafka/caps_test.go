package kafka_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/squallstream/squall/spouts/kafka"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/trident/spout/spouttest"
	"github.com/squallstream/squall/txn"
)

// record20 is a record of 20 counted bytes: a 3-byte key, a 10-byte
// value and a header of 1 + 6 bytes.
func record20(i int) kafkago.Message {
	return kafkago.Message{
		Key: fmt.Appendf(nil, "k%02d", i), Value: fmt.Appendf(nil, "v%09d", i),
		Headers: []kafkago.Header{{Key: "h", Value: []byte("abcdef")}},
	}
}

// TestByteCapCountsHeaders: MaxBytesPerPartition counts header bytes
// beside keys and values.
func TestByteCapCountsHeaders(t *testing.T) {
	brokers(t, func(t *testing.T, b *broker) {
		topic := b.topic(t, 1)
		var msgs []kafkago.Message
		for i := range 10 {
			msgs = append(msgs, record20(i))
		}
		b.produce(t, topic, 0, msgs...)
		cfg := b.spoutConfig(t, topic)
		cfg.MaxBytesPerPartition = 70 // 3 records of 20 bytes; 5 without headers
		m, got := emit(t, newSpout(t, cfg).NewEmitter(0), 1, part(topic, 0), nil)
		if len(got) != 3 || m.Next != 3 {
			t.Fatalf("byte cap with headers: %d records, meta %+v; want 3", len(got), m)
		}
	})
}

// TestTaskCaps: the per-task caps bound one task's batch over all its
// partitions, each partition getting a fair share of what is left, and a
// new attempt starts with the whole budget.
func TestTaskCaps(t *testing.T) {
	brokers(t, func(t *testing.T, b *broker) {
		const partitions = 4
		topic := b.topic(t, partitions)
		for p := range partitions {
			var msgs []kafkago.Message
			for i := range 10 {
				msgs = append(msgs, record20(i))
			}
			b.produce(t, topic, p, msgs...)
		}
		owned := make([]spout.Partition, partitions)
		for p := range owned {
			owned[p] = part(topic, p)
		}
		// counts emits one attempt of every partition and returns the
		// records of each.
		counts := func(e spout.Emitter[kafka.Meta], a txn.Attempt) []int {
			t.Helper()
			if err := e.(spout.Refresher).Refresh(context.Background(), owned); err != nil {
				t.Fatal(err)
			}
			var out []int
			for _, p := range owned {
				var c spouttest.Collector
				m, err := e.Emit(context.Background(), a, p, nil, &c)
				if err != nil {
					t.Fatalf("emit %s: %v", p, err)
				}
				if m.Count != len(c.Tuples()) || m.Next-m.First != int64(m.Count) {
					t.Fatalf("meta %+v with %d tuples", m, len(c.Tuples()))
				}
				out = append(out, m.Count)
			}
			return out
		}
		check := func(what string, got, want []int) {
			t.Helper()
			if !slices.Equal(got, want) {
				t.Fatalf("%s: records per partition %v, want %v", what, got, want)
			}
		}

		cfg := b.spoutConfig(t, topic)
		cfg.MaxBatchBytesPerTask = 200 // 10 records: shares 50, 54, 60, 60 bytes
		e := newSpout(t, cfg).NewEmitter(0)
		check("bytes per task", counts(e, txn.Attempt{TxID: 1}), []int{2, 2, 3, 3})
		check("bytes per task, next attempt", counts(e, txn.Attempt{TxID: 1, N: 1}), []int{2, 2, 3, 3})

		cfg = b.spoutConfig(t, topic)
		cfg.MaxBatchRecordsPerTask = 5 // shares 2, 1, 1, 1
		check("records per task", counts(newSpout(t, cfg).NewEmitter(0), txn.Attempt{TxID: 1}), []int{2, 1, 1, 1})

		cfg.MaxBatchRecordsPerTask = 2 // shares 1, 1, then nothing left
		check("records per task under the partitions", counts(newSpout(t, cfg).NewEmitter(0), txn.Attempt{TxID: 1}), []int{1, 1, 0, 0})

		// The task's first record is taken whatever its size; then the
		// batch is full.
		cfg = b.spoutConfig(t, topic)
		cfg.MaxBatchBytesPerTask = 10
		check("a first record over the task cap", counts(newSpout(t, cfg).NewEmitter(0), txn.Attempt{TxID: 1}), []int{1, 0, 0, 0})

		// The per-partition cap still applies within the share.
		cfg = b.spoutConfig(t, topic)
		cfg.MaxBatchRecordsPerTask, cfg.MaxRecordsPerPartition = 100, 4
		check("per-partition cap under the task's", counts(newSpout(t, cfg).NewEmitter(0), txn.Attempt{TxID: txn.TxID(1)}), []int{4, 4, 4, 4})
	})
}

func TestTaskCapsValidate(t *testing.T) {
	cfg := kafka.Config{Brokers: []string{"x:1"}, Topics: []string{"t"}, Topology: "x", MaxBatchBytesPerTask: -1}
	if err := cfg.Validate(); err == nil {
		t.Fatal("a negative MaxBatchBytesPerTask passed Validate")
	}
	cfg.MaxBatchBytesPerTask, cfg.MaxBatchRecordsPerTask = 0, -1
	if err := cfg.Validate(); err == nil {
		t.Fatal("a negative MaxBatchRecordsPerTask passed Validate")
	}
}
