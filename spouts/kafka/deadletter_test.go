package kafka_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/squallstream/squall/spouts/kafka"
)

// TestDeadLetters runs the pipeline on the real Kafka over records of
// which every 97th is malformed, with failing batches: the counts of the
// good records are exact, and every malformed record lands in the
// dead-letter topic with its coordinates and the decoder's error exactly
// once, though failed batches replay them.
func TestDeadLetters(t *testing.T) {
	b := realBroker(t)
	const (
		records    = 20_000
		partitions = 4
	)
	topic, dlq := b.topic(t, partitions), b.topic(t, 1)
	bad := map[int]bool{}
	for i := 5; i < records; i += 97 {
		bad[i] = true
	}
	want := produceKeyed(t, b.addrs, topic, partitions, records, 50, bad)
	pl := startPipeline(t, pipelineParams{
		Brokers: b.addrs, Topic: topic, DeadLetters: dlq, Keys: 50, SpoutTasks: 2, MaxRecords: 500,
		FailEvery: 3001,
	})
	defer pl.stop(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	checkCounts(t, pl.waitTotal(t, ctx, int64(records-len(bad))), want)

	st := pl.sp.Stats()
	if st.DecodeFailures < uint64(len(bad)) || st.DeadLettered != uint64(len(bad)) ||
		st.DeadLettered+st.DeadLettersSkipped != st.DecodeFailures || pl.failed.Load() == 0 {
		t.Fatalf("stats %+v after %d failed batches, want at least %d decode failures, %[3]d dead letters, the rest skipped, and failed batches",
			st, pl.failed.Load(), len(bad))
	}

	// Every malformed record is in the dead-letter topic once, named by
	// its coordinates, and those coordinates hold a malformed record.
	if n := logEnd(t, b, dlq, 0); n != int64(len(bad)) {
		t.Fatalf("%d dead letters in %s, want one per malformed record: %d", n, dlq, len(bad))
	}
	letters := readAll(t, b, dlq, int64(st.DeadLettered))
	seen := map[string]bool{}
	for _, m := range letters {
		h := headerMap(m.Headers)
		if h[kafka.HeaderTopic] != topic || h[kafka.HeaderError] != "malformed value" || h[kafka.HeaderTopology] != "count-"+topic ||
			!bytes.HasSuffix(m.Value, []byte("bad")) || h[kafka.HeaderTxID] == "" {
			t.Fatalf("dead letter %q/%q with headers %v", m.Key, m.Value, h)
		}
		seen[h[kafka.HeaderPartition]+"@"+h[kafka.HeaderOffset]] = true
	}
	if len(seen) != len(bad) || len(letters) != len(bad) {
		t.Fatalf("%d distinct records in the dead-letter topic (%d letters), want %d", len(seen), len(letters), len(bad))
	}
	for coord := range seen {
		var p int
		var off int64
		if _, err := fmt.Sscanf(coord, "%d@%d", &p, &off); err != nil {
			t.Fatal(err)
		}
		if v := recordAt(t, b, topic, p, off); !bytes.HasSuffix(v, []byte("bad")) {
			t.Fatalf("dead letter names %s partition %d offset %d, which holds %q", topic, p, off, v)
		}
	}
}

func headerMap(hs []kafkago.Header) map[string]string {
	out := map[string]string{}
	for _, h := range hs {
		out[h.Key] = string(h.Value)
	}
	return out
}

// logEnd returns the end offset of partition p of topic.
func logEnd(t *testing.T, b *broker, topic string, p int) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := b.client.ListOffsets(ctx, &kafkago.ListOffsetsRequest{Topics: map[string][]kafkago.OffsetRequest{
		topic: {kafkago.LastOffsetOf(p)},
	}})
	if err != nil {
		t.Fatalf("list offsets of %s@%d: %v", topic, p, err)
	}
	for _, po := range resp.Topics[topic] {
		if po.Partition == p && po.Error == nil {
			return po.LastOffset
		}
	}
	t.Fatalf("no end offset of %s@%d in %+v", topic, p, resp.Topics)
	return 0
}

// readAll reads n records from partition 0 of topic.
func readAll(t *testing.T, b *broker, topic string, n int64) []kafkago.Message {
	t.Helper()
	r := kafkago.NewReader(kafkago.ReaderConfig{Brokers: b.addrs, Topic: topic, MaxWait: 100 * time.Millisecond})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out []kafkago.Message
	for int64(len(out)) < n {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("read %s after %d of %d records: %v", topic, len(out), n, err)
		}
		out = append(out, m)
	}
	return out
}

// recordAt returns the value at offset off of topic's partition p.
func recordAt(t *testing.T, b *broker, topic string, p int, off int64) []byte {
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
		if errors.Is(err, io.EOF) {
			t.Fatalf("no record at %s@%d offset %d", topic, p, off)
		}
		if err != nil {
			t.Fatal(err)
		}
		if r.Offset == off {
			v, err := kafkago.ReadAll(r.Value)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
}
