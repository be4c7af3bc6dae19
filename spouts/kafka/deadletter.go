package kafka

import (
	"context"
	"fmt"
	"strconv"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/squallstream/squall/trident/spout"
)

// Headers the spout adds to a dead letter, beside the record's own.
const (
	HeaderError     = "squall.error"
	HeaderTopic     = "squall.topic"
	HeaderPartition = "squall.partition"
	HeaderOffset    = "squall.offset"
	HeaderTopology  = "squall.topology"
	HeaderTxID      = "squall.txid"
)

// badRecord is a record the decoder rejected.
type badRecord struct {
	rec Record
	err error
}

// deadLetters writes rejected records to Config.DeadLetterTopic.
type deadLetters struct {
	w *kafkago.Writer
}

func newDeadLetters(s *Spout) *deadLetters {
	return &deadLetters{w: &kafkago.Writer{
		Addr:         kafkago.TCP(s.cfg.Brokers...),
		Topic:        s.cfg.DeadLetterTopic,
		Balancer:     &kafkago.Hash{},
		RequiredAcks: kafkago.RequireAll,
		BatchTimeout: 5 * time.Millisecond,
		WriteTimeout: s.cfg.RequestTimeout,
		ReadTimeout:  s.cfg.RequestTimeout,
		Transport:    s.transport,
	}}
}

func (d *deadLetters) close() error { return d.w.Close() }

// deadLetter counts and logs the records the decoder rejected in one read
// and writes them to the dead-letter topic: the record's key, value and
// headers, plus the error and its coordinates in squall.* headers. The
// write is synchronous: a batch succeeds only once its bad records are
// safe. A replayed batch writes them again (at-least-once).
func (s *Spout) deadLetter(ctx context.Context, a spout.Attempt, bad []badRecord) error {
	s.stats.decodeFailures.Add(uint64(len(bad)))
	msgs := make([]kafkago.Message, len(bad))
	for i, b := range bad {
		s.cfg.Logger.Warn("kafka spout: record rejected by the decoder; sent to the dead-letter topic",
			"topic", b.rec.Topic, "partition", b.rec.Partition, "offset", b.rec.Offset, "txid", a.TxID,
			"dead_letter_topic", s.cfg.DeadLetterTopic, "err", b.err)
		headers := make([]kafkago.Header, 0, len(b.rec.Headers)+6)
		for _, h := range b.rec.Headers {
			headers = append(headers, kafkago.Header{Key: h.Key, Value: h.Value})
		}
		headers = append(headers,
			kafkago.Header{Key: HeaderError, Value: []byte(b.err.Error())},
			kafkago.Header{Key: HeaderTopic, Value: []byte(b.rec.Topic)},
			kafkago.Header{Key: HeaderPartition, Value: strconv.AppendInt(nil, int64(b.rec.Partition), 10)},
			kafkago.Header{Key: HeaderOffset, Value: strconv.AppendInt(nil, b.rec.Offset, 10)},
			kafkago.Header{Key: HeaderTopology, Value: []byte(s.cfg.TopologyID)},
			kafkago.Header{Key: HeaderTxID, Value: strconv.AppendUint(nil, uint64(a.TxID), 10)},
		)
		msgs[i] = kafkago.Message{Key: b.rec.Key, Value: b.rec.Value, Headers: headers, Time: b.rec.Time}
	}
	if s.dlq == nil {
		// Validate requires a dead-letter topic with a Decoder; RawFields
		// never fails. A custom decoder reached here only by a bug.
		return fmt.Errorf("kafka: %d records rejected and no DeadLetterTopic", len(bad))
	}
	if err := s.dlq.w.WriteMessages(ctx, msgs...); err != nil {
		tp := topicPartition{topic: bad[0].rec.Topic, partition: bad[0].rec.Partition}
		return s.brokerError(tp, fmt.Sprintf("write %d dead letters to %s", len(bad), s.cfg.DeadLetterTopic), err)
	}
	s.stats.deadLettered.Add(uint64(len(bad)))
	return nil
}
