package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/squallstream/squall/internal/testenv"
)

// TestKafkaRestart proves that a restart of the real Kafka
// (testenv.RestartService) keeps what a replaying spout depends on: the
// topic, its records at their offsets, and a consumer group's committed
// offset with its metadata; and that producing works again afterwards.
func TestKafkaRestart(t *testing.T) {
	brokers := testenv.KafkaBrokers(t)
	testenv.RequireExclusive(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	topic := testenv.UniqueName(t, "squall")
	group := topic + "_group"
	before := newKafkaClient(t, brokers)
	created, err := before.CreateTopics(ctx, &kafkago.CreateTopicsRequest{
		Topics: []kafkago.TopicConfig{{Topic: topic, NumPartitions: 1, ReplicationFactor: 1}},
	})
	if err == nil {
		err = created.Errors[topic]
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	// A clean-up, not a defer: it must run after RestartService's clean-up
	// has made sure Kafka runs again.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		resp, err := newKafkaClient(t, brokers).DeleteTopics(ctx, &kafkago.DeleteTopicsRequest{Topics: []string{topic}})
		if err == nil {
			err = resp.Errors[topic]
		}
		if err != nil {
			t.Errorf("delete topic %s: %v", topic, err)
		}
	})
	waitForLeaders(ctx, t, before, topic, 1)
	produce(ctx, t, before, topic, 0, 5)
	// The first commit on a fresh broker may meet a coordinator that is
	// still being set up (it creates __consumer_offsets).
	retry(ctx, t, "commit offset for group "+group, func() error {
		resp, err := before.OffsetCommit(ctx, &kafkago.OffsetCommitRequest{
			GroupID: group, GenerationID: -1,
			Topics: map[string][]kafkago.OffsetCommit{topic: {{Partition: 0, Offset: 3, Metadata: "txid=7"}}},
		})
		if err == nil && len(resp.Topics[topic]) == 1 {
			err = resp.Topics[topic][0].Error
		}
		return err
	})

	testenv.RestartService(t, "kafka")

	// A new client: the old one's connections went down with the broker.
	after := newKafkaClient(t, brokers)
	waitForLeaders(ctx, t, after, topic, 1)
	expectRecords(ctx, t, after, topic, 0, 5, 5)
	retry(ctx, t, "fetch committed offset", func() error {
		resp, err := after.OffsetFetch(ctx, &kafkago.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: {0}}})
		if err == nil {
			err = resp.Error
		}
		if err != nil {
			return err
		}
		if ps := resp.Topics[topic]; len(ps) != 1 || ps[0].Error != nil || ps[0].CommittedOffset != 3 || ps[0].Metadata != "txid=7" {
			return fmt.Errorf("committed offset of group %s = %+v, want offset 3 metadata txid=7", group, ps)
		}
		return nil
	})
	produce(ctx, t, after, topic, 5, 5)
	expectRecords(ctx, t, after, topic, 3, 10, 10)
}

func newKafkaClient(t *testing.T, brokers []string) *kafkago.Client {
	transport := &kafkago.Transport{}
	t.Cleanup(transport.CloseIdleConnections)
	return &kafkago.Client{Addr: kafkago.TCP(brokers...), Transport: transport, Timeout: 10 * time.Second}
}

// produce writes values v<first> ... v<first+count-1> to partition 0.
func produce(ctx context.Context, t *testing.T, client *kafkago.Client, topic string, first, count int) {
	t.Helper()
	w := &kafkago.Writer{
		Addr:         client.Addr,
		Topic:        topic,
		RequiredAcks: kafkago.RequireAll,
		BatchTimeout: 5 * time.Millisecond,
		Transport:    client.Transport,
	}
	msgs := make([]kafkago.Message, count)
	for i := range msgs {
		msgs[i] = kafkago.Message{Value: fmt.Appendf(nil, "v%d", first+i)}
	}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatalf("write v%d..v%d: %v", first, first+count-1, err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("close writer: %v", err)
	}
}

// expectRecords fetches partition 0 from offset from and wants the records
// v<from> ... v<to-1> at their own offsets, and the high watermark hw.
func expectRecords(ctx context.Context, t *testing.T, client *kafkago.Client, topic string, from, to, hw int64) {
	t.Helper()
	var resp *kafkago.FetchResponse
	retry(ctx, t, fmt.Sprintf("fetch %s from offset %d", topic, from), func() error {
		var err error
		resp, err = client.Fetch(ctx, &kafkago.FetchRequest{
			Topic: topic, Partition: 0, Offset: from,
			MinBytes: 1, MaxBytes: 1 << 20, MaxWait: 500 * time.Millisecond,
		})
		if err == nil {
			err = resp.Error
		}
		return err
	})
	if resp.HighWatermark != hw {
		t.Errorf("high watermark = %d, want %d", resp.HighWatermark, hw)
	}
	checkRecords(t, resp.Records, from, to)
}

// checkRecords reads records and wants v<from> ... v<to-1> at their own
// offsets (records before from, in the same fetched batch, are skipped).
func checkRecords(t *testing.T, records kafkago.RecordReader, from, to int64) {
	t.Helper()
	next := from
	for {
		rec, err := records.ReadRecord()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("read record at offset %d: %v", next, err)
		}
		if rec.Offset < from {
			continue // a batch may start before the requested offset
		}
		value, err := kafkago.ReadAll(rec.Value)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Offset != next || string(value) != fmt.Sprintf("v%d", next) {
			t.Fatalf("record = offset %d value %q, want offset %d value v%d", rec.Offset, value, next, next)
		}
		next++
	}
	if next != to {
		t.Fatalf("fetched offsets %d..%d, want %d..%d", from, next-1, from, to-1)
	}
}

// retry calls f every 100 ms until it succeeds: right after a restart a
// broker answers some requests with retriable errors (a coordinator still
// loading its offsets, say) for a moment.
func retry(ctx context.Context, t *testing.T, what string, f func() error) {
	t.Helper()
	for {
		err := f()
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %v (gave up: %v)", what, err, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
