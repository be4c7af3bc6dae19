package main

import (
	"context"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"
	"golang.org/x/sync/errgroup"
)

// kafkaResult is what reading the topic measured.
type kafkaResult struct {
	records int
	took    time.Duration // from the start to the last record of the slowest partition
}

// readTopic reads every partition of topic, from its first offset to the
// end offset it had when the read started, with one plain kafka-go Reader
// per partition, all at once, and returns each partition's record values
// in order.
func readTopic(ctx context.Context, brokers []string, topic string) ([][][]byte, kafkaResult, error) {
	client := &kafka.Client{Addr: kafka.TCP(brokers...)}
	meta, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return nil, kafkaResult{}, err
	}
	if len(meta.Topics) != 1 || meta.Topics[0].Error != nil {
		return nil, kafkaResult{}, fmt.Errorf("topic %s: %v", topic, meta.Topics)
	}
	var reqs []kafka.OffsetRequest
	for _, p := range meta.Topics[0].Partitions {
		reqs = append(reqs, kafka.FirstOffsetOf(p.ID), kafka.LastOffsetOf(p.ID))
	}
	offs, err := client.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: reqs}})
	if err != nil {
		return nil, kafkaResult{}, err
	}
	n := len(meta.Topics[0].Partitions)
	first, last := make([]int64, n), make([]int64, n)
	for _, po := range offs.Topics[topic] {
		if po.Error != nil {
			return nil, kafkaResult{}, fmt.Errorf("offsets of %s/%d: %w", topic, po.Partition, po.Error)
		}
		if po.Partition < 0 || po.Partition >= n {
			return nil, kafkaResult{}, fmt.Errorf("unexpected partition %d of %s", po.Partition, topic)
		}
		first[po.Partition], last[po.Partition] = po.FirstOffset, po.LastOffset
	}
	parts := make([][][]byte, n)
	took := make([]time.Duration, n) // to each partition's last record
	start := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	for p := range n {
		if first[p] >= last[p] {
			continue
		}
		g.Go(func() error {
			r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: topic, Partition: p, MinBytes: 1, MaxBytes: 16 << 20,
				MaxWait: 500 * time.Millisecond})
			// Closing waits for the fetch in flight past the end: not timed.
			defer r.Close()
			if err := r.SetOffset(first[p]); err != nil {
				return err
			}
			vals := make([][]byte, 0, last[p]-first[p])
			for {
				m, err := r.ReadMessage(gctx)
				if err != nil {
					return fmt.Errorf("partition %d: %w", p, err)
				}
				vals = append(vals, m.Value)
				if m.Offset >= last[p]-1 {
					parts[p], took[p] = vals, time.Since(start)
					return nil
				}
			}
		})
	}
	if err := g.Wait(); err != nil {
		return nil, kafkaResult{}, err
	}
	var res kafkaResult
	for p, vals := range parts {
		res.records += len(vals)
		res.took = max(res.took, took[p])
	}
	return parts, res, nil
}

// batches cuts the partitions' records into the pipeline's batches: the
// next per records of each partition, in partition order, a batch.
func batches(parts [][][]byte, per int) [][][]byte {
	var out [][][]byte
	for at := 0; ; at += per {
		var b [][]byte
		for _, vals := range parts {
			if at < len(vals) {
				b = append(b, vals[at:min(at+per, len(vals))]...)
			}
		}
		if len(b) == 0 {
			return out
		}
		out = append(out, b)
	}
}
