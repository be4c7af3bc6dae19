package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/squallstream/squall/internal/testenv"
	"github.com/squallstream/squall/spouts/kafka/kafkatest"
)

// TestProduceFetch proves that kafka-go can create a topic, produce to one
// partition, and read it back by explicit offset, the access pattern of the
// opaque spout. It runs against the in-process broker and against the real
// Kafka of scripts/services.sh.
func TestProduceFetch(t *testing.T) {
	t.Run("kafkatest", func(t *testing.T) {
		c, err := kafkatest.Start(kafkatest.Config{})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		produceFetch(t, c.Addrs())
	})
	t.Run("real", func(t *testing.T) {
		produceFetch(t, testenv.KafkaBrokers(t))
	})
}

func produceFetch(t *testing.T, brokers []string) {
	const (
		partitions = 2
		target     = 1 // the partition written and read
		count      = 10
	)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	transport := &kafkago.Transport{}
	defer transport.CloseIdleConnections()
	client := &kafkago.Client{Addr: kafkago.TCP(brokers...), Transport: transport, Timeout: 30 * time.Second}

	topic := testenv.UniqueName(t, "squall")
	created, err := client.CreateTopics(ctx, &kafkago.CreateTopicsRequest{
		Topics: []kafkago.TopicConfig{{Topic: topic, NumPartitions: partitions, ReplicationFactor: 1}},
	})
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	if err := created.Errors[topic]; err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		resp, err := client.DeleteTopics(ctx, &kafkago.DeleteTopicsRequest{Topics: []string{topic}})
		if err == nil {
			err = resp.Errors[topic]
		}
		if err != nil {
			t.Errorf("delete topic %s: %v", topic, err)
		}
	}()
	waitForLeaders(ctx, t, client, topic, partitions)

	w := &kafkago.Writer{
		Addr:         kafkago.TCP(brokers...),
		Topic:        topic,
		Balancer:     kafkago.BalancerFunc(func(kafkago.Message, ...int) int { return target }),
		RequiredAcks: kafkago.RequireAll,
		BatchTimeout: 5 * time.Millisecond,
		Transport:    transport,
	}
	msgs := make([]kafkago.Message, count)
	for i := range msgs {
		msgs[i] = kafkago.Message{Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "v%d", i)}
	}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatalf("write: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("close writer: %v", err)
	}

	// Stateless fetch from an explicit offset: what a replayed batch does.
	const from = 3
	resp, err := client.Fetch(ctx, &kafkago.FetchRequest{
		Topic: topic, Partition: target, Offset: from,
		MinBytes: 1, MaxBytes: 1 << 20, MaxWait: 500 * time.Millisecond,
	})
	if err != nil {
		t.Fatalf("fetch: %v", err)
	}
	if resp.Error != nil {
		t.Fatalf("fetch: %v", resp.Error)
	}
	if resp.HighWatermark != count {
		t.Errorf("high watermark = %d, want %d", resp.HighWatermark, count)
	}
	checkRecords(t, resp.Records, from, count)

	// The other partition stayed empty. A broker may answer a partition it
	// has not finished loading with a retriable error (and a high
	// watermark of -1): ask again until it answers, within ctx.
	var other *kafkago.FetchResponse
	for {
		other, err = client.Fetch(ctx, &kafkago.FetchRequest{
			Topic: topic, Partition: 1 - target, Offset: 0,
			MinBytes: 1, MaxBytes: 1 << 20, MaxWait: 100 * time.Millisecond,
		})
		if err != nil {
			t.Fatalf("fetch partition %d: %v", 1-target, err)
		}
		var ke kafkago.Error
		if other.Error == nil || !errors.As(other.Error, &ke) || !ke.Temporary() {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("fetch partition %d: %v (last answer: %v)", 1-target, ctx.Err(), other.Error)
		case <-time.After(50 * time.Millisecond):
		}
	}
	if other.Error != nil {
		t.Fatalf("fetch partition %d: %v", 1-target, other.Error)
	}
	if other.HighWatermark != 0 {
		t.Errorf("partition %d high watermark = %d, want 0", 1-target, other.HighWatermark)
	}

	// A partition reader positioned by offset sees the same records.
	r := kafkago.NewReader(kafkago.ReaderConfig{
		Brokers: brokers, Topic: topic, Partition: target,
		MinBytes: 1, MaxBytes: 1 << 20, MaxWait: 500 * time.Millisecond,
	})
	defer r.Close()
	if err := r.SetOffset(count - 2); err != nil {
		t.Fatal(err)
	}
	for want := int64(count - 2); want < count; want++ {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("reader at offset %d: %v", want, err)
		}
		if m.Offset != want || string(m.Key) != fmt.Sprintf("k%d", want) || m.Partition != target {
			t.Fatalf("reader got partition %d offset %d key %q, want partition %d offset %d key k%d",
				m.Partition, m.Offset, m.Key, target, want, want)
		}
	}
}

// waitForLeaders polls metadata until every partition of topic has a leader;
// a broker may answer a produce or fetch for a topic it has only just created
// with a retriable error.
func waitForLeaders(ctx context.Context, t testing.TB, client *kafkago.Client, topic string, partitions int) {
	t.Helper()
	for {
		md, err := client.Metadata(ctx, &kafkago.MetadataRequest{Topics: []string{topic}})
		if err == nil && len(md.Topics) == 1 && md.Topics[0].Error == nil && len(md.Topics[0].Partitions) == partitions {
			ready := true
			for _, p := range md.Topics[0].Partitions {
				ready = ready && p.Error == nil && p.Leader.Host != ""
			}
			if ready {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("topic %s has no leader for every partition: %v (last error: %v)", topic, ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
