package kafka_test

import (
	"context"
	"errors"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/spouts/kafka"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/trident/spout/spouttest"
	"github.com/squallstream/squall/txn"
)

// Storm's KafkaTridentSpoutEmitter cases, on the in-process broker and the
// real Kafka: a new batch without metadata (earliest, latest), a new batch
// from previous metadata, empty batches then new records, an exact re-emit,
// and a redeploy with a new topology id.

func TestEmitFirstBatchEarliest(t *testing.T) {
	brokers(t, func(t *testing.T, b *broker) {
		topic := b.topic(t, 2)
		b.values(t, topic, 1, 0, 10)
		cfg := b.spoutConfig(t, topic)
		cfg.MaxRecordsPerPartition = 4
		e := newSpout(t, cfg).NewEmitter(0)
		m, got := emit(t, e, 1, part(topic, 1), nil)
		wantValues(t, "first batch", got, seq(0, 4))
		if m.First != 0 || m.Next != 4 || m.Count != 4 || m.TopologyID != cfg.Topology || m.TxID != 1 {
			t.Fatalf("meta = %+v, want [0, 4) of 4 records, topology %q, txid 1", m, cfg.Topology)
		}
		// The other partition is empty: an empty batch at offset 0.
		if m0, got := emit(t, e, 1, part(topic, 0), nil); len(got) != 0 || m0.First != 0 || m0.Next != 0 || m0.Count != 0 {
			t.Fatalf("empty partition: meta %+v, values %v", m0, got)
		}
	})
}

func TestEmitFirstBatchLatest(t *testing.T) {
	brokers(t, func(t *testing.T, b *broker) {
		topic := b.topic(t, 1)
		b.values(t, topic, 0, 0, 5)
		cfg := b.spoutConfig(t, topic)
		cfg.Start = kafka.Latest
		e := newSpout(t, cfg).NewEmitter(0)
		p := part(topic, 0)
		m, got := emit(t, e, 1, p, nil)
		if len(got) != 0 || m.First != 5 || m.Next != 5 {
			t.Fatalf("latest: meta %+v values %v, want an empty batch at 5", m, got)
		}
		b.values(t, topic, 0, 5, 3)
		// A replay of the first batch (no metadata again) starts where the
		// first attempt did, not at the new end: the records in between
		// are not skipped.
		m, got = emit(t, e, 1, p, nil)
		wantValues(t, "replay of the first batch", got, seq(5, 8))
		if m.First != 5 || m.Next != 8 {
			t.Fatalf("replay meta %+v, want [5, 8)", m)
		}
		m2, got := emit(t, e, 2, p, &m)
		if len(got) != 0 || m2.First != 8 || m2.Next != 8 {
			t.Fatalf("next batch: meta %+v values %v", m2, got)
		}
	})
}

func TestEmitFromPreviousMetadata(t *testing.T) {
	brokers(t, func(t *testing.T, b *broker) {
		topic := b.topic(t, 1)
		b.values(t, topic, 0, 0, 20)
		cfg := b.spoutConfig(t, topic)
		cfg.MaxRecordsPerPartition = 7
		sp := newSpout(t, cfg)
		p := part(topic, 0)
		prev := kafka.Meta{First: 3, Next: 9, Count: 6, TopologyID: cfg.Topology, TxID: 4}
		// A fresh emitter (a restarted worker) given stored metadata.
		m, got := emit(t, sp.NewEmitter(0), 5, p, &prev)
		wantValues(t, "after [3, 9)", got, seq(9, 16))
		m, got = emit(t, sp.NewEmitter(1), 6, p, &m)
		wantValues(t, "after [9, 16)", got, seq(16, 20))
		if m.First != 16 || m.Next != 20 || m.Count != 4 || m.TxID != 6 {
			t.Fatalf("meta %+v, want [16, 20) of 4 at txid 6", m)
		}
		if st := sp.Stats(); st.Emitted != 11 || st.Partitions[string(p)] != (kafka.PartitionStats{Next: 20, LogEnd: 20}) {
			t.Fatalf("stats %+v, want 11 emitted and partition at 20 of 20", st)
		}
	})
}

func TestEmptyBatchesThenNewRecords(t *testing.T) {
	brokers(t, func(t *testing.T, b *broker) {
		topic := b.topic(t, 1)
		b.values(t, topic, 0, 0, 2)
		e := newSpout(t, b.spoutConfig(t, topic)).NewEmitter(0)
		p := part(topic, 0)
		m, got := emit(t, e, 1, p, nil)
		wantValues(t, "batch 1", got, seq(0, 2))
		for txid := range 3 {
			var empty []string
			m, empty = emit(t, e, txn.TxID(2+txid), p, &m)
			if len(empty) != 0 || m.First != 2 || m.Next != 2 || m.Count != 0 {
				t.Fatalf("empty batch %d: meta %+v values %v, want [2, 2)", txid, m, empty)
			}
		}
		b.values(t, topic, 0, 2, 3)
		m, got = emit(t, e, 5, p, &m)
		wantValues(t, "after the empty batches", got, seq(2, 5))
		if m.First != 2 || m.Next != 5 {
			t.Fatalf("meta %+v, want [2, 5)", m)
		}
	})
}

func TestReemitExactRange(t *testing.T) {
	brokers(t, func(t *testing.T, b *broker) {
		topic := b.topic(t, 1)
		b.values(t, topic, 0, 0, 10)
		cfg := b.spoutConfig(t, topic)
		cfg.MaxRecordsPerPartition = 5
		sp := newSpout(t, cfg)
		p := part(topic, 0)
		m, got := emit(t, sp.NewEmitter(0), 1, p, nil)
		wantValues(t, "batch", got, seq(0, 5))
		b.values(t, topic, 0, 10, 10)
		// Re-emit on another emitter (a restarted worker) and with more
		// records in the log: exactly the range, nothing after Next.
		for _, meta := range []kafka.Meta{m, {First: 3, Next: 8, Count: 5, TopologyID: "old-deploy", TxID: 9}} {
			var c spouttest.Collector
			if err := sp.NewEmitter(1).Reemit(context.Background(), txn.Attempt{TxID: 1, N: 1}, p, meta, &c); err != nil {
				t.Fatalf("reemit %+v: %v", meta, err)
			}
			wantValues(t, "re-emit", rawValues(t, c.Tuples()), seq(int(meta.First), int(meta.Next)))
		}
		// An empty batch re-emits nothing.
		var c spouttest.Collector
		if err := sp.NewEmitter(0).Reemit(context.Background(), txn.Attempt{TxID: 2}, p, kafka.Meta{First: 5, Next: 5}, &c); err != nil || len(c.Tuples()) != 0 {
			t.Fatalf("empty re-emit: %v, %d tuples", err, len(c.Tuples()))
		}
		// A range that claims more records than the log holds is gone.
		err := sp.NewEmitter(0).Reemit(context.Background(), txn.Attempt{TxID: 3}, p, kafka.Meta{First: 18, Next: 30, Count: 12}, &spouttest.Collector{})
		if !errors.Is(err, spout.ErrUnavailable) {
			t.Fatalf("re-emit past the log end: %v, want ErrUnavailable", err)
		}
	})
}

func TestRedeployWithNewTopologyID(t *testing.T) {
	brokers(t, func(t *testing.T, b *broker) {
		topic := b.topic(t, 1)
		b.values(t, topic, 0, 0, 10)
		p := part(topic, 0)
		stored := kafka.Meta{First: 2, Next: 6, Count: 4, TopologyID: "deploy-1", TxID: 3}

		// Same topology id: resume from the stored metadata.
		cfg := b.spoutConfig(t, topic)
		cfg.TopologyID = "deploy-1"
		m, got := emit(t, newSpout(t, cfg).NewEmitter(0), 4, p, &stored)
		wantValues(t, "restart", got, seq(6, 10))
		if m.TopologyID != "deploy-1" {
			t.Fatalf("meta %+v", m)
		}

		// A new id with Earliest: start over from the first record.
		cfg.TopologyID = "deploy-2"
		m, got = emit(t, newSpout(t, cfg).NewEmitter(0), 4, p, &stored)
		wantValues(t, "redeploy, earliest", got, seq(0, 10))
		if m.First != 0 || m.TopologyID != "deploy-2" {
			t.Fatalf("meta %+v, want [0, 10) of deploy-2", m)
		}
		// Its next batch continues from its own metadata.
		b.values(t, topic, 0, 10, 1)
		_, got = emit(t, newSpout(t, cfg).NewEmitter(0), 5, p, &m)
		wantValues(t, "after the redeploy", got, seq(10, 11))

		// A new id with Latest: only what comes next.
		cfg.TopologyID, cfg.Start = "deploy-3", kafka.Latest
		m, got = emit(t, newSpout(t, cfg).NewEmitter(0), 4, p, &stored)
		if len(got) != 0 || m.First != 11 || m.Next != 11 {
			t.Fatalf("redeploy, latest: meta %+v values %v, want an empty batch at 11", m, got)
		}
	})
}

func TestStartAtTime(t *testing.T) {
	brokers(t, func(t *testing.T, b *broker) {
		topic := b.topic(t, 1)
		base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
		var msgs []kafkago.Message
		for i := range 6 {
			msgs = append(msgs, kafkago.Message{Value: []byte(seq(i, i+1)[0]), Time: base.Add(time.Duration(i) * time.Minute)})
		}
		b.produce(t, topic, 0, msgs...)
		cfg := b.spoutConfig(t, topic)
		cfg.Start = kafka.AtTime(base.Add(150 * time.Second)) // between v2 and v3
		_, got := emit(t, newSpout(t, cfg).NewEmitter(0), 1, part(topic, 0), nil)
		wantValues(t, "at time", got, seq(3, 6))
		cfg.Start = kafka.AtTime(time.Now().Add(time.Hour))
		m, got := emit(t, newSpout(t, cfg).NewEmitter(0), 1, part(topic, 0), nil)
		if len(got) != 0 || m.First != 6 {
			t.Fatalf("a time after every record: meta %+v values %v, want an empty batch at the end", m, got)
		}
	})
}

func TestBatchCaps(t *testing.T) {
	brokers(t, func(t *testing.T, b *broker) {
		topic := b.topic(t, 1)
		// 20 records of 10-byte values and 3-byte keys (k10..k29).
		var msgs []kafkago.Message
		for i := 10; i < 30; i++ {
			msgs = append(msgs, kafkago.Message{Key: []byte(seq(i, i+1)[0][1:]), Value: []byte("0123456789")})
			msgs[len(msgs)-1].Key = append([]byte("k"), msgs[len(msgs)-1].Key...)
		}
		b.produce(t, topic, 0, msgs...)
		cfg := b.spoutConfig(t, topic)
		cfg.MaxBytesPerPartition = 70 // 5 records of 13 bytes
		e := newSpout(t, cfg).NewEmitter(0)
		p := part(topic, 0)
		m, got := emit(t, e, 1, p, nil)
		if len(got) != 5 || m.Next != 5 {
			t.Fatalf("byte cap: %d records, meta %+v; want 5", len(got), m)
		}
		cfg.MaxBytesPerPartition, cfg.MaxRecordsPerPartition = 0, 3
		m, got = emit(t, newSpout(t, cfg).NewEmitter(0), 2, p, &m)
		if len(got) != 3 || m.First != 5 || m.Next != 8 {
			t.Fatalf("record cap: %d records, meta %+v; want [5, 8)", len(got), m)
		}
		// A record bigger than the byte cap still makes progress.
		cfg.MaxBytesPerPartition, cfg.MaxRecordsPerPartition = 1, 0
		m, got = emit(t, newSpout(t, cfg).NewEmitter(0), 3, p, &m)
		if len(got) != 1 || m.Next != 9 {
			t.Fatalf("oversized record: %d records, meta %+v; want one", len(got), m)
		}
	})
}

func TestNewErrors(t *testing.T) {
	b := fakeBroker(t, 1)
	topic := b.topic(t, 1)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		cfg  kafka.Config
		want error
	}{
		{"no brokers", kafka.Config{Topics: []string{topic}, Topology: "x"}, kafka.ErrInvalidConfig},
		{"no topology", kafka.Config{Brokers: b.addrs, Topics: []string{topic}}, kafka.ErrInvalidConfig},
		{"decoder without dead letters", kafka.Config{Brokers: b.addrs, Topics: []string{topic}, Topology: "x",
			Decoder: kafka.DecoderFunc([]string{"v"}, func(r kafka.Record) ([]any, error) { return nil, nil })}, kafka.ErrInvalidConfig},
		{"bad topic name", kafka.Config{Brokers: b.addrs, Topics: []string{"a b"}, Topology: "x"}, kafka.ErrInvalidConfig},
		{"unknown topic", kafka.Config{Brokers: b.addrs, Topics: []string{topic, "no-such-topic"}, Topology: "x"}, kafka.ErrUnknownTopic},
		{"unknown dead-letter topic", kafka.Config{Brokers: b.addrs, Topics: []string{topic}, Topology: "x", DeadLetterTopic: "no-such-dlq"}, kafka.ErrUnknownTopic},
		{"unreachable", kafka.Config{Brokers: []string{"127.0.0.1:1"}, Topics: []string{topic}, Topology: "x", RequestTimeout: 2 * time.Second}, kafka.ErrUnreachable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Logger = testLogger(t)
			sp, err := kafka.New(ctx, tc.cfg)
			if err == nil {
				sp.Close()
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("New: %v, want %v", err, tc.want)
			}
			t.Log(err)
		})
	}
}

func TestRetryableWhenBrokerDown(t *testing.T) {
	b := fakeBroker(t, 1)
	topic := b.topic(t, 1)
	b.values(t, topic, 0, 0, 3)
	cfg := b.spoutConfig(t, topic)
	cfg.RequestTimeout = 2 * time.Second
	sp := newSpout(t, cfg)
	b.cluster.Close()
	var c spouttest.Collector
	_, err := sp.NewEmitter(0).Emit(context.Background(), txn.Attempt{TxID: 1}, part(topic, 0), nil, &c)
	if err == nil || !failure.IsRetryable(err) || failure.IsReported(err) {
		t.Fatalf("emit with the broker down: %v (kind %v), want a retryable error", err, failure.KindOf(err))
	}
	if sp.Stats().Reconnects == 0 {
		t.Fatal("no reconnect counted")
	}
	t.Log(err)
}

// TestAddedPartitionStartsAtEarliest: with Start = Latest, the partitions
// present at start begin at their end, but a partition added while the
// spout runs begins at its first record.
func TestAddedPartitionStartsAtEarliest(t *testing.T) {
	b := fakeBroker(t, 1)
	topic := b.topic(t, 1)
	b.values(t, topic, 0, 0, 3)
	cfg := b.spoutConfig(t, topic)
	cfg.Start, cfg.RefreshInterval = kafka.Latest, 20*time.Millisecond
	sp := newSpout(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if ps, err := sp.Partitions(ctx); err != nil || len(ps) != 1 {
		t.Fatalf("partitions %v, %v", ps, err)
	}
	e := sp.NewEmitter(0)
	if m, got := emit(t, e, 1, part(topic, 0), nil); len(got) != 0 || m.First != 3 {
		t.Fatalf("existing partition with Latest: meta %+v values %v, want an empty batch at 3", m, got)
	}
	resp, err := b.client.CreatePartitions(ctx, &kafkago.CreatePartitionsRequest{Topics: []kafkago.TopicPartitionsConfig{{Name: topic, Count: 2}}})
	if err == nil {
		err = resp.Errors[topic]
	}
	if err != nil {
		t.Fatal(err)
	}
	b.waitLeaders(ctx, t, topic, 2)
	b.values(t, topic, 1, 0, 2)
	for {
		ps, err := sp.Partitions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) == 2 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the new partition was never listed: %v", ps)
		case <-time.After(10 * time.Millisecond):
		}
	}
	_, got := emit(t, e, 2, part(topic, 1), nil)
	wantValues(t, "added partition", got, seq(0, 2))
}
