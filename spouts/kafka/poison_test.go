package kafka_test

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/spouts/kafka"
	"github.com/squallstream/squall/trident"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/trident/spout/spouttest"
	"github.com/squallstream/squall/txn"
)

// rejectBad is a decoder of one field, the value, that rejects values
// starting with "bad" and panics on values starting with "boom".
var rejectBad = kafka.DecoderFunc(trident.Fields{"value"}, func(r kafka.Record) ([]any, error) {
	switch {
	case bytes.HasPrefix(r.Value, []byte("boom")):
		panic("boom at " + strconv.FormatInt(r.Offset, 10))
	case bytes.HasPrefix(r.Value, []byte("bad")):
		return nil, errors.New("malformed value")
	}
	return []any{string(r.Value)}, nil
})

// decodedSpout is a spout over topic with rejectBad and dead letters to
// dlq.
func decodedSpout(t *testing.T, b *broker, topic, dlq string) *kafka.Spout {
	cfg := b.spoutConfig(t, topic)
	cfg.Decoder, cfg.DeadLetterTopic = rejectBad, dlq
	return newSpout(t, cfg)
}

// emitValues has e emit a new batch of p and returns its metadata and the
// decoded values, or the error.
func emitValues(e spout.Emitter[kafka.Meta], txid int, p spout.Partition) (kafka.Meta, []string, error) {
	var c spouttest.Collector
	m, err := e.Emit(context.Background(), txn.Attempt{TxID: txn.TxID(txid)}, p, nil, &c)
	var out []string
	for _, tu := range c.Tuples() {
		out = append(out, tu[0].(string))
	}
	return m, out, err
}

// TestDeadLetterTooLarge: a malformed record whose dead letter is larger
// than the dead-letter topic's max.message.bytes is written as a truncated
// letter (coordinates, error, size, first bytes) instead of stalling the
// stream, and counted; a small one beside it is written whole.
func TestDeadLetterTooLarge(t *testing.T) {
	brokers(t, func(t *testing.T, b *broker) {
		topic := b.topic(t, 1)
		dlq := b.topic(t, 1, kafkago.ConfigEntry{ConfigName: "max.message.bytes", ConfigValue: "4096"})
		big := append([]byte("bad"), bytes.Repeat([]byte("x"), 20_000)...)
		hdr := kafkago.Header{Key: "trace", Value: bytes.Repeat([]byte("h"), 3000)}
		b.produce(t, topic, 0,
			kafkago.Message{Value: []byte("v0")},
			kafkago.Message{Key: []byte("kbig"), Value: big, Headers: []kafkago.Header{hdr}},
			kafkago.Message{Value: []byte("v2")},
			kafkago.Message{Key: []byte("ksmall"), Value: []byte("bad-small")},
		)
		sp := decodedSpout(t, b, topic, dlq)
		if got := sp.DeadLetterLimit(); got != 4096 {
			t.Fatalf("dead-letter limit %d, want the topic's max.message.bytes 4096", got)
		}
		m, got, err := emitValues(sp.NewEmitter(0), 1, part(topic, 0))
		if err != nil {
			t.Fatalf("emit: %v", err)
		}
		if m.Next != 4 || m.Count != 4 || strings.Join(got, ",") != "v0,v2" {
			t.Fatalf("meta %+v values %v, want all 4 records read and v0,v2 emitted", m, got)
		}
		st := sp.Stats()
		if st.DecodeFailures != 2 || st.DeadLettered != 2 || st.DeadLettersTruncated != 1 {
			t.Fatalf("stats %+v, want 2 decode failures, 2 dead letters, 1 truncated", st)
		}
		letters := readAll(t, b, dlq, 2)
		byOffset := map[string]kafkago.Message{}
		for _, l := range letters {
			byOffset[headerMap(l.Headers)[kafka.HeaderOffset]] = l
		}
		tr, ok := byOffset["1"]
		h := headerMap(tr.Headers)
		wantSize := strconv.Itoa(len("kbig") + len(big) + len(hdr.Key) + len(hdr.Value))
		if !ok || h[kafka.HeaderTruncated] == "" || h[kafka.HeaderSize] != wantSize || h[kafka.HeaderError] != "malformed value" ||
			h[kafka.HeaderTopic] != topic || h[kafka.HeaderPartition] != "0" || string(tr.Key) != "kbig" ||
			!bytes.Equal(tr.Value, big[:1024]) || h["trace"] != "" {
			t.Fatalf("truncated letter: key %q, %d value bytes, headers %v; want size %s", tr.Key, len(tr.Value), h, wantSize)
		}
		full, ok := byOffset["3"]
		h = headerMap(full.Headers)
		if !ok || string(full.Value) != "bad-small" || string(full.Key) != "ksmall" || h[kafka.HeaderTruncated] != "" ||
			h[kafka.HeaderError] != "malformed value" {
			t.Fatalf("small letter: %q/%q headers %v, want it whole", full.Key, full.Value, h)
		}
	})
}

// faultyLetters wraps the dead-letter writer and fails writes as told.
type faultyLetters struct {
	kafka.LetterWriter
	mu    sync.Mutex
	fault func(m kafkago.Message) error // nil: write it
	calls int
	after error // returned after the write, whatever its outcome
}

func (f *faultyLetters) WriteMessages(ctx context.Context, msgs ...kafkago.Message) error {
	f.mu.Lock()
	fault, after := f.fault, f.after
	f.calls++
	f.mu.Unlock()
	if after != nil {
		if err := f.LetterWriter.WriteMessages(ctx, msgs...); err != nil {
			return err
		}
		return after
	}
	if fault == nil {
		return f.LetterWriter.WriteMessages(ctx, msgs...)
	}
	errs := make(kafkago.WriteErrors, len(msgs))
	var ok []kafkago.Message
	failed := false
	for i, m := range msgs {
		if errs[i] = fault(m); errs[i] == nil {
			ok = append(ok, m)
		} else {
			failed = true
		}
	}
	if len(ok) > 0 {
		if err := f.LetterWriter.WriteMessages(ctx, ok...); err != nil {
			return err
		}
	}
	if failed {
		return errs
	}
	return nil
}

func (f *faultyLetters) setAfter(err error) {
	f.mu.Lock()
	f.after = err
	f.mu.Unlock()
}

func (f *faultyLetters) set(fault func(kafkago.Message) error) {
	f.mu.Lock()
	f.fault = fault
	f.mu.Unlock()
}

// TestDeadLetterWriteFaults: a dead letter that cannot be written is
// never dropped silently. A retryable produce error fails the batch as
// retryable (and a replay writes the letters); a letter the broker
// refuses for good is replaced by a truncated one; a truncated letter
// refused too fails the batch as reported.
func TestDeadLetterWriteFaults(t *testing.T) {
	b := fakeBroker(t, 1)
	topic, dlq := b.topic(t, 1), b.topic(t, 1)
	b.produce(t, topic, 0,
		kafkago.Message{Value: []byte("v0")},
		kafkago.Message{Value: append([]byte("bad"), bytes.Repeat([]byte("x"), 3000)...)},
		kafkago.Message{Value: []byte("bad-small")},
	)
	sp := decodedSpout(t, b, topic, dlq)
	fw := &faultyLetters{}
	sp.WrapDeadLetters(func(w kafka.LetterWriter) kafka.LetterWriter { fw.LetterWriter = w; return fw })
	e, p := sp.NewEmitter(0), part(topic, 0)

	// A broker that cannot take writes for now: the batch fails, retryably.
	fw.set(func(kafkago.Message) error { return kafkago.NotEnoughReplicas })
	_, _, err := emitValues(e, 1, p)
	if err == nil || failure.KindOf(err) != failure.Retry || !errors.Is(err, kafkago.NotEnoughReplicas) {
		t.Fatalf("emit with the dead-letter topic unavailable: %v (kind %v), want a retryable failure", err, failure.KindOf(err))
	}
	if st := sp.Stats(); st.DeadLettered != 0 || st.DecodeFailures != 0 {
		t.Fatalf("stats %+v after a failed dead-letter write, want nothing dead-lettered or counted yet", st)
	}

	// Letters over 2000 bytes refused for good: the big one is truncated,
	// the small one written whole.
	fw.set(func(m kafkago.Message) error {
		if len(m.Value) > 2000 {
			return kafkago.MessageSizeTooLarge
		}
		return nil
	})
	if _, got, err := emitValues(e, 2, p); err != nil || strings.Join(got, ",") != "v0" {
		t.Fatalf("emit with a refused letter: values %v, err %v; want v0 and no error", got, err)
	}
	if st := sp.Stats(); st.DeadLettered != 2 || st.DeadLettersTruncated != 1 {
		t.Fatalf("stats %+v, want 2 dead letters, 1 of them truncated", st)
	}
	letters := readAll(t, b, dlq, 2)
	h0, h1 := headerMap(letters[0].Headers), headerMap(letters[1].Headers)
	if h0[kafka.HeaderOffset] == "2" { // the order of the two writes
		h0, h1 = h1, h0
		letters[0], letters[1] = letters[1], letters[0]
	}
	if h0[kafka.HeaderOffset] != "1" || !strings.Contains(h0[kafka.HeaderTruncated], "Message Size Too Large") ||
		h0[kafka.HeaderSize] != "3003" || len(letters[0].Value) != 1024 ||
		h1[kafka.HeaderOffset] != "2" || h1[kafka.HeaderTruncated] != "" || string(letters[1].Value) != "bad-small" {
		t.Fatalf("letters %v (%d bytes) and %v (%q)", h0, len(letters[0].Value), h1, letters[1].Value)
	}

	// Everything refused (for example, writes to the topic are not
	// authorized): the batch fails, reported, rather than dropping. (The
	// letters of offsets 1 and 2 are written: a new malformed record.)
	b.produce(t, topic, 0, kafkago.Message{Value: []byte("bad-later")})
	fw.set(func(kafkago.Message) error { return kafkago.TopicAuthorizationFailed })
	_, _, err = emitValues(e, 3, p)
	if err == nil || !failure.IsReported(err) || !errors.Is(err, kafkago.TopicAuthorizationFailed) {
		t.Fatalf("emit with every letter refused: %v, want a reported failure", err)
	}
}

// TestDecoderPanic: a Decoder that panics on a record is recovered; the
// record is dead-lettered with the panic as its error and counted, and
// the batch goes on.
func TestDecoderPanic(t *testing.T) {
	b := fakeBroker(t, 1)
	topic, dlq := b.topic(t, 1), b.topic(t, 1)
	b.produce(t, topic, 0,
		kafkago.Message{Value: []byte("v0")},
		kafkago.Message{Value: []byte("boom")},
		kafkago.Message{Value: []byte("v2")},
	)
	sp := decodedSpout(t, b, topic, dlq)
	m, got, err := emitValues(sp.NewEmitter(0), 1, part(topic, 0))
	if err != nil || m.Next != 3 || strings.Join(got, ",") != "v0,v2" {
		t.Fatalf("emit: meta %+v values %v err %v; want v0,v2 from 3 records", m, got, err)
	}
	if st := sp.Stats(); st.DecodeFailures != 1 || st.DecoderPanics != 1 || st.DeadLettered != 1 {
		t.Fatalf("stats %+v, want one decode failure, a panic, dead-lettered", st)
	}
	h := headerMap(readAll(t, b, dlq, 1)[0].Headers)
	if h[kafka.HeaderError] != "kafka: the decoder panicked: boom at 1" || h[kafka.HeaderOffset] != "1" {
		t.Fatalf("dead letter headers %v", h)
	}
}

// TestDeadLetterRefusedByBroker: the dead-letter topic's limit is lowered
// after New, so the spout's writer sends a letter the real broker refuses
// with MESSAGE_TOO_LARGE; the spout writes a truncated letter instead.
func TestDeadLetterRefusedByBroker(t *testing.T) {
	b := realBroker(t)
	topic, dlq := b.topic(t, 1), b.topic(t, 1)
	big := append([]byte("bad"), bytes.Repeat([]byte("y"), 20_000)...)
	b.produce(t, topic, 0, kafkago.Message{Key: []byte("k"), Value: big}, kafkago.Message{Value: []byte("v1")})
	sp := decodedSpout(t, b, topic, dlq)
	if sp.DeadLetterLimit() < 30_000 {
		t.Fatalf("dead-letter limit %d before it is lowered", sp.DeadLetterLimit())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := b.client.AlterConfigs(ctx, &kafkago.AlterConfigsRequest{Resources: []kafkago.AlterConfigRequestResource{{
		ResourceType: kafkago.ResourceTypeTopic, ResourceName: dlq,
		Configs: []kafkago.AlterConfigRequestConfig{{Name: "max.message.bytes", Value: "4096"}},
	}}})
	if err == nil {
		for _, e := range resp.Errors {
			err = errors.Join(err, e)
		}
	}
	if err != nil {
		t.Fatalf("lower max.message.bytes of %s: %v", dlq, err)
	}
	_, got, err := emitValues(sp.NewEmitter(0), 1, part(topic, 0))
	if err != nil || strings.Join(got, ",") != "v1" {
		t.Fatalf("emit: values %v, err %v; want v1", got, err)
	}
	if st := sp.Stats(); st.DeadLettered != 1 || st.DeadLettersTruncated != 1 {
		t.Fatalf("stats %+v, want one truncated dead letter", st)
	}
	h := headerMap(readAll(t, b, dlq, 1)[0].Headers)
	if !strings.Contains(h[kafka.HeaderTruncated], "Message Size Too Large") || h[kafka.HeaderSize] != strconv.Itoa(1+len(big)) ||
		h[kafka.HeaderOffset] != "0" {
		t.Fatalf("letter headers %v, want a truncated letter naming the broker's refusal", h)
	}
}
