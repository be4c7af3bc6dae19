package kafka_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"
)

// TestTransactionalPipeline counts through the transactional flavour, with
// failing batches and worker crashes: every replay re-emits the recorded
// ranges, and the counts are exact.
func TestTransactionalPipeline(t *testing.T) {
	b := fakeBroker(t, 1)
	const records, partitions = 30_000, 4
	topic := b.topic(t, partitions)
	want := produceKeyed(t, b.addrs, topic, partitions, records, 20, nil)
	pl := startPipeline(t, pipelineParams{
		Brokers: b.addrs, Topic: topic, DeadLetters: b.topic(t, 1), Keys: 20, SpoutTasks: 3, MaxRecords: 700,
		Transactional: true, FailEvery: 4001, PanicEvery: 9001, MaxPanics: 2,
	})
	defer pl.stop(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	checkCounts(t, pl.waitTotal(t, ctx, records), want)
	if pl.failed.Load() == 0 || pl.panics.Load() == 0 {
		t.Fatalf("%d failed batches and %d crashes: the run did not replay", pl.failed.Load(), pl.panics.Load())
	}
}

// TestNewPartitionsAndMirror adds partitions to the real Kafka topic while
// the pipeline runs: their records are counted once the lister sees them
// (RefreshInterval is 500ms in the pipeline). Then the consumer group
// named after the topology shows every partition's end as its committed
// offset, with the topology id and a txid in the commit metadata.
func TestNewPartitionsAndMirror(t *testing.T) {
	b := realBroker(t)
	topic := b.topic(t, 2)
	want := produceKeyed(t, b.addrs, topic, 2, 2000, 10, nil)
	pl := startPipeline(t, pipelineParams{Brokers: b.addrs, Topic: topic, DeadLetters: b.topic(t, 1), Keys: 10, SpoutTasks: 2})
	defer pl.stop(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pl.waitTotal(t, ctx, 2000)

	resp, err := b.client.CreatePartitions(ctx, &kafkago.CreatePartitionsRequest{
		Topics: []kafkago.TopicPartitionsConfig{{Name: topic, Count: 4}},
	})
	if err == nil {
		err = resp.Errors[topic]
	}
	if err != nil {
		t.Fatalf("add partitions: %v", err)
	}
	b.waitLeaders(ctx, t, topic, 4)
	added := time.Now()
	for p := 2; p < 4; p++ {
		b.produce(t, topic, p, kafkago.Message{Key: []byte("k3")}, kafkago.Message{Key: []byte("k4")})
	}
	want["k3"] += 2
	want["k4"] += 2
	checkCounts(t, pl.waitTotal(t, ctx, 2004), want)
	t.Logf("records of the new partitions counted %v after they were added", time.Since(added).Round(time.Millisecond))

	group := "count-" + topic
	for {
		resp, err := b.client.OffsetFetch(ctx, &kafkago.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: {0, 1, 2, 3}}})
		if err == nil {
			err = resp.Error
		}
		var got []string
		ok := err == nil
		if ok {
			for _, p := range resp.Topics[topic] {
				got = append(got, fmt.Sprintf("%d:%d %q", p.Partition, p.CommittedOffset, p.Metadata))
				end := int64(1000)
				if p.Partition >= 2 {
					end = 2
				}
				ok = ok && p.Error == nil && p.CommittedOffset == end &&
					strings.HasPrefix(p.Metadata, "squall topology="+group+" txid=")
			}
		}
		if ok && len(got) == 4 {
			t.Logf("mirror: %v", got)
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("group %s: %v (err %v), want every partition at its end", group, got, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
