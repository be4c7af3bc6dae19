package kafka_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/spouts/kafka"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/trident/spout/spouttest"
	"github.com/squallstream/squall/txn"
)

// deleteRecords deletes the records of topic's partition before offset,
// as retention would (kafka-go has no DeleteRecords call).
func (b *broker) deleteRecords(t testing.TB, topic string, partition int32, before int64) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.addrs...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req := kmsg.NewPtrDeleteRecordsRequest()
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewDeleteRecordsRequestTopicPartition()
	rp.Partition, rp.Offset = partition, before
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("delete records of %s@%d before %d: %v", topic, partition, before, err)
	}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
				t.Fatalf("delete records of %s@%d before %d: %v", topic, partition, before, err)
			}
		}
	}
}

func TestOutOfRange(t *testing.T) {
	brokers(t, func(t *testing.T, b *broker) {
		topic := b.topic(t, 1)
		b.values(t, topic, 0, 0, 10)
		p := part(topic, 0)
		cfg := b.spoutConfig(t, topic)
		cfg.MaxRecordsPerPartition = 3
		sp := newSpout(t, cfg)
		m, got := emit(t, sp.NewEmitter(0), 1, p, nil)
		wantValues(t, "batch 1", got, seq(0, 3))
		b.deleteRecords(t, topic, 0, 7)

		// Default: the batch fails with a reported error naming the
		// partition and the offsets.
		_, err := sp.NewEmitter(0).Emit(context.Background(), txn.Attempt{TxID: 2}, p, &m, &spouttest.Collector{})
		var oor *kafka.OutOfRangeError
		if !errors.As(err, &oor) || !failure.IsReported(err) || oor.Offset != 3 || oor.Earliest != 7 || oor.End != 10 ||
			!strings.Contains(err.Error(), topic+" partition 0: offset 3 is out of range") || !strings.Contains(err.Error(), "4 offsets were deleted") {
			t.Fatalf("emit after retention: %v, want a reported OutOfRangeError at 3 of [7, 10)", err)
		}
		t.Log(err)

		// A transactional replay of the stored range is unavailable.
		err = sp.NewEmitter(0).Reemit(context.Background(), txn.Attempt{TxID: 1, N: 1}, p, m, &spouttest.Collector{})
		if !errors.Is(err, spout.ErrUnavailable) || !errors.Is(err, kafka.ErrOutOfRange) {
			t.Fatalf("re-emit of deleted records: %v, want ErrUnavailable and ErrOutOfRange", err)
		}

		// SkipToEarliest moves on, reports and counts the loss.
		cfg.OnOutOfRange = kafka.SkipToEarliest
		skipper := newSpout(t, cfg)
		var c spouttest.Collector
		m2, err := skipper.NewEmitter(0).Emit(context.Background(), txn.Attempt{TxID: 2}, p, &m, &c)
		if err != nil {
			t.Fatal(err)
		}
		wantValues(t, "after the skip", rawValues(t, c.Tuples()), seq(7, 10))
		if m2.First != 7 || m2.Next != 10 {
			t.Fatalf("meta %+v, want [7, 10)", m2)
		}
		errs := c.Errors()
		if len(errs) != 1 || !errors.Is(errs[0], kafka.ErrOutOfRange) || !strings.Contains(errs[0].Error(), "4 offsets lost") {
			t.Fatalf("reported %v, want one out-of-range report with 4 offsets lost", errs)
		}
		if st := skipper.Stats(); st.OutOfRangeSkips != 1 || st.OffsetsLost != 4 {
			t.Fatalf("stats %+v, want 1 skip of 4 offsets", st)
		}
	})
}
