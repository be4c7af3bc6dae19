package kafka

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/squallstream/squall/txn"
)

// Headers the spout adds to a dead letter, beside the record's own.
const (
	HeaderError     = "squall.error"
	HeaderTopic     = "squall.topic"
	HeaderPartition = "squall.partition"
	HeaderOffset    = "squall.offset"
	HeaderTopology  = "squall.topology"
	HeaderTxID      = "squall.txid"

	// HeaderTruncated marks a truncated dead letter: the full letter could
	// not be written (too large for the dead-letter topic, or refused by
	// the broker), and the value says why. Such a letter carries the
	// coordinates and the decoder's error in the headers above, the
	// record's size in HeaderSize, and only the first bytes of the
	// record's key and value as its key and value; the record's own
	// headers are left out.
	HeaderTruncated = "squall.truncated"
	// HeaderSize is the size of the rejected record in bytes: key, value
	// and headers. Truncated letters carry it.
	HeaderSize = "squall.size"
)

// Bounds of a truncated dead letter.
const (
	truncatedKeyBytes   = 256
	truncatedValueBytes = 1024
	truncatedTextBytes  = 1024 // the decoder's error and the reason
)

// badRecord is a record the decoder rejected.
type badRecord struct {
	rec Record
	err error
}

// letterWriter writes dead letters: a *kafkago.Writer, or in tests a
// wrapper that injects faults.
type letterWriter interface {
	WriteMessages(ctx context.Context, msgs ...kafkago.Message) error
	Close() error
}

// deadLetters writes rejected records to Config.DeadLetterTopic.
type deadLetters struct {
	w        letterWriter
	maxBytes int    // the largest record batch the topic accepts
	limit    string // where maxBytes came from
}

// newDeadLetters returns the dead-letter writer, its limits set from the
// largest record batch the topic accepts.
func newDeadLetters(ctx context.Context, s *Spout) *deadLetters {
	maxBytes, from, err := s.maxMessageBytes(ctx)
	if err != nil {
		s.cfg.Logger.Warn("kafka spout: cannot read the dead-letter topic's max.message.bytes; assuming the default",
			"dead_letter_topic", s.cfg.DeadLetterTopic, "max_message_bytes", maxBytes, "err", err)
	}
	return &deadLetters{maxBytes: maxBytes, limit: from, w: &kafkago.Writer{
		Addr:         kafkago.TCP(s.cfg.Brokers...),
		Topic:        s.cfg.DeadLetterTopic,
		Balancer:     letterBalancer{},
		RequiredAcks: kafkago.RequireAll,
		BatchTimeout: 5 * time.Millisecond,
		BatchBytes:   int64(max(maxBytes-recordBatchHeader, 1)),
		WriteTimeout: s.cfg.RequestTimeout,
		ReadTimeout:  s.cfg.RequestTimeout,
		Transport:    s.transport,
	}}
}

func (d *deadLetters) close() error { return d.w.Close() }

// fits reports whether m, alone in a record batch, is within the topic's
// limit.
func (d *deadLetters) fits(m kafkago.Message) bool {
	return letterSize(m)+recordBatchOverhead+10*len(m.Headers) <= d.maxBytes
}

// size is the key, value and header bytes of r, as the byte caps count
// them (recordSize).
func (r Record) size() int {
	n := len(r.Key) + len(r.Value)
	for _, h := range r.Headers {
		n += len(h.Key) + len(h.Value)
	}
	return n
}

// letterSize is the key, value and header bytes of m.
func letterSize(m kafkago.Message) int {
	n := len(m.Key) + len(m.Value)
	for _, h := range m.Headers {
		n += len(h.Key) + len(h.Value)
	}
	return n
}

// deadLetter counts and logs the records the decoder rejected in one read
// of tp that started at offset from, and writes to the dead-letter topic
// the letters not already there (ledger.go): the record's key, value and
// headers, plus the error and its coordinates in squall.* headers. The
// write is synchronous: a batch succeeds only once its bad records are
// safe. A replayed batch finds its letters written and writes none again.
//
// A letter the topic cannot take (larger than its max.message.bytes) or
// the broker refuses for good (any non-retryable produce error) is
// replaced by a truncated letter (HeaderTruncated), so a poison pill never
// stalls the stream. A retryable error (broker down, leader moving) fails
// the batch as retryable, and the spout forgets what it knew of tp's
// letters (some may have been written); a truncated letter that is
// refused too fails it as reported.
func (s *Spout) deadLetter(ctx context.Context, a txn.Attempt, tp topicPartition, from int64, bad []badRecord) error {
	if s.dlq == nil {
		// Validate requires a dead-letter topic with a Decoder; RawFields
		// never fails. A custom decoder reached here only by a bug.
		return fmt.Errorf("kafka: %d records rejected and no DeadLetterTopic", len(bad))
	}
	if err := s.knownLetters(ctx, tp, from); err != nil {
		return err
	}
	todo := bad[:0:0]
	for _, b := range bad {
		if s.letters.has(tp, b.rec.Offset) {
			s.stats.letterSettled(false)
			s.cfg.Logger.Info("kafka spout: record rejected by the decoder; its dead letter is already written",
				"topic", b.rec.Topic, "partition", b.rec.Partition, "offset", b.rec.Offset, "txid", a.TxID,
				"dead_letter_topic", s.cfg.DeadLetterTopic, "err", b.err)
			continue
		}
		s.cfg.Logger.Warn("kafka spout: record rejected by the decoder; sent to the dead-letter topic",
			"topic", b.rec.Topic, "partition", b.rec.Partition, "offset", b.rec.Offset, "txid", a.TxID,
			"dead_letter_topic", s.cfg.DeadLetterTopic, "err", b.err)
		todo = append(todo, b)
	}
	if len(todo) == 0 {
		return nil
	}
	if err := s.writeLetters(ctx, a, tp, from, todo); err != nil {
		s.letters.forget(tp)
		return err
	}
	return nil
}

// writeLetters writes the letters of bad, rejected records of tp read
// from offset from.
func (s *Spout) writeLetters(ctx context.Context, a txn.Attempt, tp topicPartition, from int64, bad []badRecord) error {
	letters := make([]kafkago.Message, len(bad))
	truncated := make([]bool, len(bad))
	for i, b := range bad {
		letters[i] = s.fullLetter(a, b)
		if !s.dlq.fits(letters[i]) {
			reason := fmt.Errorf("the dead letter has %d bytes; %s is %d", letterSize(letters[i]), s.dlq.limit, s.dlq.maxBytes)
			letters[i], truncated[i] = s.truncatedLetter(a, b, reason), true
		}
	}
	op := fmt.Sprintf("write %d dead letters to %s", len(bad), s.cfg.DeadLetterTopic)
	errs, err := letterErrors(s.dlq.w.WriteMessages(ctx, letters...), len(letters))
	if err != nil {
		return s.brokerError(tp, op, err)
	}
	for i, e := range errs {
		if e == nil {
			s.lettered(a, from, bad[i], letters[i], truncated[i])
		}
	}
	for _, e := range errs {
		if e != nil && !refused(e) {
			return s.brokerError(tp, op, e)
		}
	}
	for i, e := range errs {
		if e != nil {
			if err := s.rewriteRefused(ctx, a, tp, from, bad[i], letters[i], truncated[i], len(letters) > 1, e); err != nil {
				return err
			}
		}
	}
	return nil
}

// rewriteRefused writes again the letter of b that the broker refused with
// refusal: alone first if it was written with others (a record batch of
// several letters may be over the limit where one is not), then, refused
// again, as a truncated letter. A truncated letter refused too is a
// reported error.
func (s *Spout) rewriteRefused(ctx context.Context, a txn.Attempt, tp topicPartition, from int64, b badRecord,
	letter kafkago.Message, truncated, withOthers bool, refusal error) error {
	if truncated {
		return s.brokerError(tp, "write a truncated dead letter to "+s.cfg.DeadLetterTopic, refusal)
	}
	if withOthers {
		if refusal = s.dlq.writeOne(ctx, letter); refusal == nil {
			s.lettered(a, from, b, letter, false)
			return nil
		}
		if !refused(refusal) {
			return s.brokerError(tp, "write a dead letter to "+s.cfg.DeadLetterTopic, refusal)
		}
	}
	short := s.truncatedLetter(a, b, refusal)
	if err := s.dlq.writeOne(ctx, short); err != nil {
		return s.brokerError(tp, fmt.Sprintf("write a truncated dead letter to %s (the full letter: %v)",
			s.cfg.DeadLetterTopic, refusal), err)
	}
	s.lettered(a, from, b, short, true)
	return nil
}

// writeOne writes one letter and returns its error, unwrapped from the
// writer's per-letter errors.
func (d *deadLetters) writeOne(ctx context.Context, m kafkago.Message) error {
	errs, err := letterErrors(d.w.WriteMessages(ctx, m), 1)
	if err != nil {
		return err
	}
	return errs[0]
}

// letterErrors splits the error of a write of n letters into one error per
// letter (nil for a letter written). A failure of the whole write that is
// not about the letters themselves (network, context) comes back as err.
func letterErrors(err error, n int) (errs []error, _ error) {
	errs = make([]error, n)
	if err == nil {
		return errs, nil
	}
	var werrs kafkago.WriteErrors
	var tooLarge kafkago.MessageTooLargeError
	switch {
	case errors.As(err, &werrs) && len(werrs) == n:
		copy(errs, werrs)
	case errors.As(err, &tooLarge):
		// The writer refused the whole call for one letter; nothing was
		// written.
		for i := range errs {
			errs[i] = err
		}
	default:
		return nil, err
	}
	return errs, nil
}

// refused reports whether err is the broker's (or the writer's) final
// refusal of a letter, one that writing it again cannot change: a Kafka
// error that is not temporary, such as MESSAGE_TOO_LARGE,
// RECORD_LIST_TOO_LARGE or INVALID_RECORD.
func refused(err error) bool {
	var kerr kafkago.Error
	return errors.As(err, &kerr) && !kerr.Temporary()
}

// fullLetter is the dead letter of b: the record's key, value and
// headers, plus the squall.* headers.
func (s *Spout) fullLetter(a txn.Attempt, b badRecord) kafkago.Message {
	headers := make([]kafkago.Header, 0, len(b.rec.Headers)+6)
	for _, h := range b.rec.Headers {
		headers = append(headers, kafkago.Header{Key: h.Key, Value: h.Value})
	}
	headers = s.appendCoordinates(headers, a, b, []byte(b.err.Error()))
	return kafkago.Message{Key: b.rec.Key, Value: b.rec.Value, Headers: headers, Time: b.rec.Time}
}

// truncatedLetter is the small dead letter of b written when its full
// letter cannot be: the coordinates, the decoder's error, why, the
// record's size, and the first bytes of its key and value.
func (s *Spout) truncatedLetter(a txn.Attempt, b badRecord, why error) kafkago.Message {
	headers := s.appendCoordinates(make([]kafkago.Header, 0, 8), a, b, head([]byte(b.err.Error()), truncatedTextBytes))
	headers = append(headers,
		kafkago.Header{Key: HeaderTruncated, Value: head([]byte(why.Error()), truncatedTextBytes)},
		kafkago.Header{Key: HeaderSize, Value: strconv.AppendInt(nil, int64(b.rec.size()), 10)},
	)
	return kafkago.Message{
		Key:     head(b.rec.Key, truncatedKeyBytes),
		Value:   head(b.rec.Value, truncatedValueBytes),
		Headers: headers,
		Time:    b.rec.Time,
	}
}

func (s *Spout) appendCoordinates(headers []kafkago.Header, a txn.Attempt, b badRecord, errText []byte) []kafkago.Header {
	return append(headers,
		kafkago.Header{Key: HeaderError, Value: errText},
		kafkago.Header{Key: HeaderTopic, Value: []byte(b.rec.Topic)},
		kafkago.Header{Key: HeaderPartition, Value: strconv.AppendInt(nil, int64(b.rec.Partition), 10)},
		kafkago.Header{Key: HeaderOffset, Value: strconv.AppendInt(nil, b.rec.Offset, 10)},
		kafkago.Header{Key: HeaderTopology, Value: []byte(s.cfg.TopologyID)},
		kafkago.Header{Key: HeaderTxID, Value: strconv.AppendUint(nil, uint64(a.TxID), 10)},
	)
}

// head returns the first n bytes of b (nil stays nil).
func head(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n:n]
	}
	return b
}

// lettered records the letter of b, read from offset from, as written,
// counts it and, if it is a truncated letter, logs it.
func (s *Spout) lettered(a txn.Attempt, from int64, b badRecord, letter kafkago.Message, truncated bool) {
	s.letters.add(topicPartition{topic: b.rec.Topic, partition: b.rec.Partition}, from, b.rec.Offset)
	s.stats.letterSettled(true)
	if !truncated {
		return
	}
	s.stats.deadLettersTruncated.Add(1)
	var why []byte
	for _, h := range letter.Headers {
		if h.Key == HeaderTruncated {
			why = h.Value
		}
	}
	s.cfg.Logger.Warn("kafka spout: dead letter truncated: the full letter cannot be written",
		"topic", b.rec.Topic, "partition", b.rec.Partition, "offset", b.rec.Offset, "txid", a.TxID,
		"dead_letter_topic", s.cfg.DeadLetterTopic, "key_bytes", len(b.rec.Key), "value_bytes", len(b.rec.Value),
		"headers", len(b.rec.Headers), "reason", string(why))
}
