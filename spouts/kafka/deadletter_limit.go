package kafka

import (
	"context"
	"fmt"
	"strconv"

	kafkago "github.com/segmentio/kafka-go"
)

// defaultMaxMessageBytes is Kafka's default message.max.bytes, used when
// the brokers do not say what the dead-letter topic accepts.
const defaultMaxMessageBytes = 1048588

// recordBatchHeader is the size of a record batch's header on the wire.
const recordBatchHeader = 61

// recordBatchOverhead is what a record batch of one record adds to the
// record's key, value and headers on the wire: the batch header and the
// record's own framing (length, attributes, timestamp and offset deltas,
// key and value lengths, header count), rounded up.
const recordBatchOverhead = recordBatchHeader + 40

// maxMessageBytes asks the brokers for the largest record batch the
// dead-letter topic accepts: the topic's max.message.bytes, or, if the
// topic does not answer it, the broker's message.max.bytes. The second
// result says where the figure came from. If neither answers (for
// example, the credentials may not describe configs), it returns Kafka's
// default and the reason; a dead letter the broker refuses anyway is
// still replaced by a truncated one.
func (s *Spout) maxMessageBytes(ctx context.Context) (int, string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	topic := s.cfg.DeadLetterTopic
	v, err := s.describeConfig(ctx, kafkago.ResourceTypeTopic, topic, "max.message.bytes")
	if err == nil {
		return v, "topic " + topic + " max.message.bytes", nil
	}
	md, merr := s.client.Metadata(ctx, &kafkago.MetadataRequest{Topics: []string{topic}})
	if merr != nil || len(md.Brokers) == 0 {
		return defaultMaxMessageBytes, "the default message.max.bytes", fmt.Errorf("describe topic %s: %w", topic, err)
	}
	id := strconv.Itoa(md.Controller.ID)
	if md.Controller.Host == "" {
		id = strconv.Itoa(md.Brokers[0].ID)
	}
	v, berr := s.describeConfig(ctx, kafkago.ResourceTypeBroker, id, "message.max.bytes")
	if berr != nil {
		return defaultMaxMessageBytes, "the default message.max.bytes",
			fmt.Errorf("describe topic %s: %w; describe broker %s: %w", topic, err, id, berr)
	}
	return v, "broker " + id + " message.max.bytes", nil
}

// describeConfig returns the integer value of config name of a resource.
func (s *Spout) describeConfig(ctx context.Context, typ kafkago.ResourceType, name, config string) (int, error) {
	resp, err := s.client.DescribeConfigs(ctx, &kafkago.DescribeConfigsRequest{
		Resources: []kafkago.DescribeConfigRequestResource{{ResourceType: typ, ResourceName: name, ConfigNames: []string{config}}},
	})
	if err != nil {
		return 0, err
	}
	for _, r := range resp.Resources {
		if r.Error != nil {
			return 0, r.Error
		}
		for _, e := range r.ConfigEntries {
			if e.ConfigName != config {
				continue
			}
			v, err := strconv.Atoi(e.ConfigValue)
			if err != nil || v <= 0 {
				return 0, fmt.Errorf("%s = %q is not a positive integer", config, e.ConfigValue)
			}
			return v, nil
		}
	}
	return 0, fmt.Errorf("no %s in the answer", config)
}
