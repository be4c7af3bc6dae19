package kafka_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
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

// dlqLetters reads every letter of the dead-letter topic dlq (of n
// partitions) and returns, per identity "topic@partition@offset", the
// dead-letter partitions it was found in.
func dlqLetters(t *testing.T, b *broker, dlq string, n int) map[string][]int {
	t.Helper()
	out := map[string][]int{}
	for p := range n {
		end := logEnd(t, b, dlq, p)
		for off := int64(0); off < end; off++ {
			h := letterHeadersAt(t, b, dlq, p, off)
			id := h[kafka.HeaderTopic] + "@" + h[kafka.HeaderPartition] + "@" + h[kafka.HeaderOffset]
			out[id] = append(out[id], p)
		}
	}
	return out
}

// letterHeadersAt returns the headers of the record at off of dlq@p.
func letterHeadersAt(t *testing.T, b *broker, topic string, p int, off int64) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := b.client.Fetch(ctx, &kafkago.FetchRequest{Topic: topic, Partition: p, Offset: off, MaxBytes: 1 << 20})
	if err == nil {
		err = resp.Error
	}
	if err != nil {
		t.Fatalf("fetch %s@%d offset %d: %v", topic, p, off, err)
	}
	for {
		r, err := resp.Records.ReadRecord()
		if err != nil {
			t.Fatalf("no record at %s@%d offset %d: %v", topic, p, off, err)
		}
		if r.Offset == off {
			return headerMap(r.Headers)
		}
	}
}

// wantLetters checks that dlq holds exactly one letter for each of ids,
// and that the letters of one source partition share a dead-letter
// partition.
func wantLetters(t *testing.T, b *broker, dlq string, partitions int, ids ...string) {
	t.Helper()
	got := dlqLetters(t, b, dlq, partitions)
	byPart := map[string]int{}
	for _, id := range ids {
		ps := got[id]
		if len(ps) != 1 {
			t.Fatalf("%d letters for %s (in dead-letter partitions %v), want 1; all letters %v", len(ps), id, ps, got)
		}
		src := id[:strings.LastIndexByte(id, '@')]
		if p, ok := byPart[src]; ok && p != ps[0] {
			t.Fatalf("letters of %s in dead-letter partitions %d and %d", src, p, ps[0])
		}
		byPart[src] = ps[0]
	}
	if len(got) != len(ids) {
		t.Fatalf("letters %v, want exactly %v", got, ids)
	}
}

// TestDeadLetterOncePerRecord: the malformed records of a batch are
// dead-lettered once whatever the attempts: a first emit, a replay from the
// same start (the batch failed), an exact re-emit, a replay by a new spout
// (a worker restart before the commit), and a replay whose letter write
// reached the broker but answered an error (a write whose outcome the
// spout cannot know). A new malformed record is lettered as usual.
func TestDeadLetterOncePerRecord(t *testing.T) {
	brokers(t, func(t *testing.T, b *broker) {
		topic, dlq := b.topic(t, 2), b.topic(t, 3)
		b.produce(t, topic, 0, kafkago.Message{Value: []byte("v0")}, kafkago.Message{Value: []byte("bad-1")},
			kafkago.Message{Value: []byte("v2")}, kafkago.Message{Value: []byte("bad-3")})
		b.produce(t, topic, 1, kafkago.Message{Value: []byte("bad-0")}, kafkago.Message{Value: []byte("v1")})
		p0, p1 := part(topic, 0), part(topic, 1)
		id := func(p, off int) string { return fmt.Sprintf("%s@%d@%d", topic, p, off) }

		sp := decodedSpout(t, b, topic, dlq)
		e := sp.NewEmitter(0)
		var m0 kafka.Meta
		for n := range uint32(2) { // attempt 0, then a replay after a failure
			for _, p := range []spout.Partition{p0, p1} {
				var c spouttest.Collector
				m, err := e.Emit(context.Background(), txn.Attempt{TxID: 1, N: n}, p, nil, &c)
				if err != nil {
					t.Fatalf("emit %s attempt %d: %v", p, n, err)
				}
				if p == p0 {
					m0 = m
				}
			}
		}
		var c spouttest.Collector
		if err := e.Reemit(context.Background(), txn.Attempt{TxID: 1, N: 2}, p0, m0, &c); err != nil {
			t.Fatalf("reemit %s: %v", m0, err)
		}
		if st := sp.Stats(); st.DecodeFailures != 8 || st.DeadLettered != 3 || st.DeadLettersSkipped != 5 {
			t.Fatalf("stats %+v, want 8 decode failures (3 records, 2 emits and a re-emit of 2): 3 letters, 5 skipped", st)
		}
		wantLetters(t, b, dlq, 3, id(0, 1), id(0, 3), id(1, 0))

		// A restart: a new spout replays the batch that never committed.
		sp2 := decodedSpout(t, b, topic, dlq)
		e2 := sp2.NewEmitter(0)
		for _, p := range []spout.Partition{p0, p1} {
			var c spouttest.Collector
			if _, err := e2.Emit(context.Background(), txn.Attempt{TxID: 1, N: 3}, p, nil, &c); err != nil {
				t.Fatalf("emit %s after the restart: %v", p, err)
			}
		}
		if st := sp2.Stats(); st.DeadLettered != 0 || st.DeadLettersSkipped != 3 || st.DeadLetterScans != 2 {
			t.Fatalf("stats after the restart %+v, want the 3 letters found by 2 scans, none written", st)
		}

		// A letter written whose write answers an error: the batch fails,
		// the replay finds the letter.
		b.produce(t, topic, 0, kafkago.Message{Value: []byte("bad-4")})
		fw := &faultyLetters{}
		sp2.WrapDeadLetters(func(w kafka.LetterWriter) kafka.LetterWriter { fw.LetterWriter = w; return fw })
		fw.setAfter(kafkago.RequestTimedOut)
		if _, err := e2.Emit(context.Background(), txn.Attempt{TxID: 2}, p0, &m0, &c); err == nil ||
			failure.KindOf(err) != failure.Retry {
			t.Fatalf("emit with an unknown write outcome: %v, want a retryable failure", err)
		}
		fw.setAfter(nil)
		if _, err := e2.Emit(context.Background(), txn.Attempt{TxID: 2, N: 1}, p0, &m0, &c); err != nil {
			t.Fatalf("replay: %v", err)
		}
		// The write that answered an error is not counted as written; the
		// third scan found its letter.
		if st := sp2.Stats(); st.DeadLettered != 0 || st.DeadLettersSkipped != 4 || st.DeadLetterScans != 3 {
			t.Fatalf("stats %+v, want the letter found by a third scan, not written again", st)
		}
		wantLetters(t, b, dlq, 3, id(0, 1), id(0, 3), id(1, 0), id(0, 4))
	})
}

// TestDeadLetterOnceThroughFailedBatches runs a topology on the real
// Kafka whose only batch holds a malformed record and fails twice before
// it commits on its third attempt: the dead-letter topic holds one letter.
func TestDeadLetterOnceThroughFailedBatches(t *testing.T) {
	b := realBroker(t)
	topic, dlq := b.topic(t, 1), b.topic(t, 1)
	b.produce(t, topic, 0, kafkago.Message{Key: []byte("k0"), Value: []byte("v0")},
		kafkago.Message{Key: []byte("k1"), Value: []byte("bad")}, kafkago.Message{Key: []byte("k2"), Value: []byte("v2")})
	cfg := b.spoutConfig(t, topic)
	cfg.Decoder, cfg.DeadLetterTopic = keyDecoder, dlq
	sp := newSpout(t, cfg)

	var failures atomic.Int32
	tt := trident.NewTopology("once")
	s := tt.NewStream("events", sp.Opaque()).Filter(trident.FilterFunc(func(_ context.Context, tu trident.Tuple) (bool, error) {
		if tu.String("key") == "k2" {
			if n := failures.Add(1); n <= 2 {
				return false, failure.Retryable(fmt.Errorf("attempt %d fails", n))
			}
		}
		return true, nil
	}))
	trident.PersistentAggregate(s.GroupBy("key"), trident.OpaqueMemory[int64]("counts"), trident.Fields{"key"}, countAgg{}, "count")
	tc := trident.Config{}
	tc.BatchEmitInterval = time.Millisecond
	tc.RetryBackoff, tc.MaxRetryBackoff = time.Millisecond, 10*time.Millisecond
	r, err := tt.Submit(context.Background(), tc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	defer r.Stop(ctx)
	if err := r.WaitCommitted(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if n := failures.Load(); n != 3 {
		t.Fatalf("k2 seen in %d attempts, want 3 (2 failed)", n)
	}
	if st := sp.Stats(); st.DecodeFailures != 3 || st.DeadLettered != 1 || st.DeadLettersSkipped != 2 {
		t.Fatalf("stats %+v, want the malformed record rejected in 3 attempts and lettered once", st)
	}
	if n := logEnd(t, b, dlq, 0); n != 1 {
		t.Fatalf("%d dead letters, want 1", n)
	}
}
