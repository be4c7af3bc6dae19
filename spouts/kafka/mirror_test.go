package kafka_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// TestMirrorFollowsCommits: the consumer group shows where the last
// committed batch ended, with its txid, and nothing of batches that are
// emitted but not committed.
func TestMirrorFollowsCommits(t *testing.T) {
	brokers(t, func(t *testing.T, b *broker) {
		topic := b.topic(t, 1)
		b.values(t, topic, 0, 0, 10)
		cfg := b.spoutConfig(t, topic)
		cfg.MirrorInterval = 20 * time.Millisecond
		e := newSpout(t, cfg).NewEmitter(0)
		committed := func(txid txn.TxID) {
			t.Helper()
			if err := e.(spout.Committer).Committed(context.Background(), txid); err != nil {
				t.Fatalf("Committed(%d): %v", txid, err)
			}
		}
		m1, _ := emit(t, e, 1, part(topic, 0), nil)
		b.values(t, topic, 0, 10, 5)
		emit(t, e, 2, part(topic, 0), &m1)
		committed(1)
		waitMirroredAt(t, b, cfg.Topology, topic, 10, 1)
		committed(2)
		waitMirroredAt(t, b, cfg.Topology, topic, 15, 2)
	})
}

// waitMirroredAt waits until group has offset committed for partition 0
// of topic, with txid in the metadata.
func waitMirroredAt(t *testing.T, b *broker, group, topic string, offset int64, txid txn.TxID) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	want := fmt.Sprintf("squall topology=%s txid=%d", group, txid)
	for {
		resp, err := b.client.OffsetFetch(ctx, &kafkago.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: {0}}})
		if err == nil {
			err = resp.Error
		}
		if err == nil && len(resp.Topics[topic]) == 1 {
			p := resp.Topics[topic][0]
			if p.CommittedOffset == offset && p.Metadata == want {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("mirror group %s: %+v (err %v), want offset %d with %q", group, resp, err, offset, want)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
