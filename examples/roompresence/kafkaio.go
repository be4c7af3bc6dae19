package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/squallstream/squall/examples/roompresence/room"
)

// kafkaIO is the example's own access to Kafka, outside the topology:
// creating topics, writing generated events, reading the whole topic back
// for verification, and end offsets for progress.
type kafkaIO struct {
	brokers   []string
	client    *kafkago.Client
	transport *kafkago.Transport
}

// newKafkaIO connects to brokers with the spout's SASL and TLS settings.
func newKafkaIO(brokers []string, sec kafkaSec) (*kafkaIO, error) {
	mech, err := sec.sasl.Build()
	if err != nil {
		return nil, err
	}
	tc, err := sec.tls.Build()
	if err != nil {
		return nil, err
	}
	tr := &kafkago.Transport{MetadataTTL: time.Second, DialTimeout: 5 * time.Second, SASL: mech, TLS: tc}
	return &kafkaIO{brokers: brokers, transport: tr,
		client: &kafkago.Client{Addr: kafkago.TCP(brokers...), Transport: tr, Timeout: 15 * time.Second}}, nil
}

func (k *kafkaIO) Close() { k.transport.CloseIdleConnections() }

// ensureTopics creates the topics that do not exist yet, each with the
// given partitions, and waits until every partition has a leader.
func (k *kafkaIO) ensureTopics(ctx context.Context, partitions int, topics ...string) error {
	// A metadata request first: its error names a SASL or TLS failure,
	// where CreateTopics would only say that no broker is available.
	if _, err := k.client.Metadata(ctx, &kafkago.MetadataRequest{Topics: topics}); err != nil {
		return fmt.Errorf("connecting to %v: %w", k.brokers, err)
	}
	var create []kafkago.TopicConfig
	for _, t := range topics {
		create = append(create, kafkago.TopicConfig{Topic: t, NumPartitions: partitions, ReplicationFactor: 1})
	}
	resp, err := k.client.CreateTopics(ctx, &kafkago.CreateTopicsRequest{Topics: create})
	if err != nil {
		return fmt.Errorf("creating topics %v on %v: %w", topics, k.brokers, err)
	}
	for t, err := range resp.Errors {
		if err != nil && !errors.Is(err, kafkago.TopicAlreadyExists) {
			return fmt.Errorf("creating topic %s: %w", t, err)
		}
	}
	for _, t := range topics {
		if err := k.waitLeaders(ctx, t); err != nil {
			return err
		}
	}
	return nil
}

func (k *kafkaIO) waitLeaders(ctx context.Context, topic string) error {
	for {
		md, err := k.client.Metadata(ctx, &kafkago.MetadataRequest{Topics: []string{topic}})
		if err == nil && len(md.Topics) == 1 && md.Topics[0].Error == nil && len(md.Topics[0].Partitions) > 0 {
			ready := true
			for _, p := range md.Topics[0].Partitions {
				ready = ready && p.Error == nil && p.Leader.Host != ""
			}
			if ready {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("topic %s: no leader for every partition (last error: %v): %w", topic, err, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// produce writes every record of g to topic, keyed by visit, calling
// progress after each acknowledged chunk. It returns the records written.
func (k *kafkaIO) produce(ctx context.Context, topic string, g *room.Generator, progress func(written int)) (int, error) {
	return k.produceN(ctx, topic, g, -1, progress)
}

// produceN is produce stopping after n records (n < 0: all of them), so
// that a generated day can be written in parts.
func (k *kafkaIO) produceN(ctx context.Context, topic string, g *room.Generator, n int, progress func(written int)) (int, error) {
	w := &kafkago.Writer{Addr: kafkago.TCP(k.brokers...), Topic: topic, Balancer: &kafkago.Hash{},
		RequiredAcks: kafkago.RequireAll, BatchSize: 1000, BatchTimeout: 5 * time.Millisecond,
		MaxAttempts: 10, Transport: k.transport}
	defer w.Close()
	const chunk = 5000
	msgs := make([]kafkago.Message, 0, chunk)
	written := 0
	flush := func() error {
		if len(msgs) == 0 {
			return nil
		}
		if err := w.WriteMessages(ctx, msgs...); err != nil {
			return fmt.Errorf("writing to %s after %d records: %w", topic, written, err)
		}
		written += len(msgs)
		msgs = msgs[:0]
		progress(written)
		return nil
	}
	for n < 0 || written+len(msgs) < n {
		r, ok := g.Next()
		if !ok {
			break
		}
		msgs = append(msgs, kafkago.Message{Key: r.Key, Value: r.Value})
		if len(msgs) == chunk {
			if err := flush(); err != nil {
				return written, err
			}
		}
	}
	return written, flush()
}

// partitions returns the partition ids of topic.
func (k *kafkaIO) partitions(ctx context.Context, topic string) ([]int, error) {
	md, err := k.client.Metadata(ctx, &kafkago.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return nil, fmt.Errorf("metadata of %s: %w", topic, err)
	}
	if len(md.Topics) != 1 || md.Topics[0].Error != nil {
		return nil, fmt.Errorf("topic %s: %v", topic, md.Topics)
	}
	var ids []int
	for _, p := range md.Topics[0].Partitions {
		ids = append(ids, p.ID)
	}
	return ids, nil
}

// bounds returns the first and end (next) offsets of each partition.
func (k *kafkaIO) bounds(ctx context.Context, topic string) (first, end map[int]int64, err error) {
	ids, err := k.partitions(ctx, topic)
	if err != nil {
		return nil, nil, err
	}
	req := &kafkago.ListOffsetsRequest{Topics: map[string][]kafkago.OffsetRequest{}}
	for _, id := range ids {
		req.Topics[topic] = append(req.Topics[topic], kafkago.FirstOffsetOf(id), kafkago.LastOffsetOf(id))
	}
	resp, err := k.client.ListOffsets(ctx, req)
	if err != nil {
		return nil, nil, fmt.Errorf("offsets of %s: %w", topic, err)
	}
	first, end = map[int]int64{}, map[int]int64{}
	for _, po := range resp.Topics[topic] {
		if po.Error != nil {
			return nil, nil, fmt.Errorf("offsets of %s partition %d: %w", topic, po.Partition, po.Error)
		}
		first[po.Partition], end[po.Partition] = po.FirstOffset, po.LastOffset
	}
	return first, end, nil
}

// record is a record read back by readAll.
type record struct {
	partition int
	offset    int64
	value     []byte
	headers   map[string]string
}

// readAll calls fn with every record of topic, from the first offset to
// the end offsets as they are when it starts, reading each partition by
// explicit offset.
func (k *kafkaIO) readAll(ctx context.Context, topic string, fn func(r record)) error {
	first, end, err := k.bounds(ctx, topic)
	if err != nil {
		return err
	}
	for p, stop := range end {
		next := first[p]
		for next < stop {
			before := next
			resp, err := k.client.Fetch(ctx, &kafkago.FetchRequest{Topic: topic, Partition: p, Offset: next, MaxBytes: 4 << 20})
			if err == nil {
				err = resp.Error
			}
			if err != nil {
				return fmt.Errorf("reading %s partition %d at offset %d: %w", topic, p, next, err)
			}
			for {
				r, err := resp.Records.ReadRecord()
				if err != nil {
					if !errors.Is(err, io.EOF) {
						return fmt.Errorf("reading %s partition %d: %w", topic, p, err)
					}
					break
				}
				if r.Offset >= next && r.Offset < stop {
					var v []byte
					if r.Value != nil {
						if v, err = io.ReadAll(r.Value); err != nil {
							return err
						}
					}
					hs := map[string]string{}
					for _, h := range r.Headers {
						hs[h.Key] = string(h.Value)
					}
					fn(record{partition: p, offset: r.Offset, value: v, headers: hs})
					next = r.Offset + 1
				}
			}
			if next == before {
				return fmt.Errorf("reading %s partition %d: no record at or after offset %d below the end %d", topic, p, next, stop)
			}
		}
	}
	return nil
}
