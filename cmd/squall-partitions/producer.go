package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	kafka "github.com/segmentio/kafka-go"

	"github.com/squallstream/squall/examples/roompresence/room"
)

// topicPartitions is the partition count of the workload's topics.
const topicPartitions = 4

// producer writes one generated day of room-presence events (the
// example's own generator, as its gen command and its cluster test use
// it) in parts, from the observer's namespace. One day, not one day per
// part: the generator names visits and events by their number, so two
// days would collide.
type producer struct {
	gen     *room.Generator
	w       *kafka.Writer
	c       *kafka.Client
	topics  []string
	perPart int
	written int
}

func newProducer(dial nsDialer, broker, topic, dlq string, seed uint64, parts, perPart int) (*producer, error) {
	const visits = 10
	g, err := room.NewGenerator(room.GenConfig{People: max(parts*perPart/(2*visits), 1), Rooms: 12, VisitsPerPerson: visits,
		Day: time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC), Seed: seed, Malformed: 0.002, OutOfOrder: 0.05})
	if err != nil {
		return nil, err
	}
	tr := &kafka.Transport{Dial: dial.DialContext}
	return &producer{gen: g, perPart: perPart, topics: []string{topic, dlq},
		c: &kafka.Client{Addr: kafka.TCP(broker), Timeout: 10 * time.Second, Transport: tr},
		w: &kafka.Writer{Addr: kafka.TCP(broker), Topic: topic, Balancer: &kafka.Hash{}, RequiredAcks: kafka.RequireAll,
			BatchSize: 1000, BatchTimeout: 5 * time.Millisecond, MaxAttempts: 10, Transport: tr}}, nil
}

// ensureTopics creates the topics unless they exist (the workers create
// them too, with the same partition count).
func (p *producer) ensureTopics(ctx context.Context) error {
	var create []kafka.TopicConfig
	for _, t := range p.topics {
		create = append(create, kafka.TopicConfig{Topic: t, NumPartitions: topicPartitions, ReplicationFactor: 1})
	}
	resp, err := p.c.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: create})
	if err != nil {
		return err
	}
	for t, err := range resp.Errors {
		if err != nil && !errors.Is(err, kafka.TopicAlreadyExists) {
			return fmt.Errorf("creating topic %s: %w", t, err)
		}
	}
	return nil
}

// part writes the next part of the day: perPart records, or all that is
// left with last.
func (p *producer) part(ctx context.Context, last bool) error {
	var msgs []kafka.Message
	for last || len(msgs) < p.perPart {
		r, ok := p.gen.Next()
		if !ok {
			break
		}
		msgs = append(msgs, kafka.Message{Key: r.Key, Value: r.Value})
	}
	for len(msgs) > 0 {
		n := min(len(msgs), 1000)
		if err := p.w.WriteMessages(ctx, msgs[:n]...); err != nil {
			return fmt.Errorf("writing events after %d: %w", p.written, err)
		}
		p.written += n
		msgs = msgs[n:]
	}
	return nil
}

func (p *producer) close() { p.w.Close() }
