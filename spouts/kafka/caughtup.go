package kafka

import (
	"context"
	"errors"
	"fmt"

	kafkago "github.com/segmentio/kafka-go"
)

// MirroredOffsets returns, for every partition of topic, where the
// committed batches of the topology whose spout mirrors to group end (its
// MirrorGroup), or -1 for a partition it has not committed yet. It
// connects with cfg's Brokers, SASL, TLS and RequestTimeout; the other
// fields are not used. With CaughtUp, it tells when a rebuild (the same
// topology run from the start of the log under another TopologyID and
// MirrorGroup) has caught up with the live topology.
func MirroredOffsets(ctx context.Context, cfg Config, group, topic string) (map[int]int64, error) {
	if len(cfg.Brokers) == 0 || group == "" || topic == "" {
		return nil, fmt.Errorf("%w: MirroredOffsets needs brokers, a group and a topic", ErrInvalidConfig)
	}
	cfg = cfg.withDefaults()
	transport, err := newTransport(cfg)
	if err != nil {
		return nil, err
	}
	defer transport.CloseIdleConnections()
	client := &kafkago.Client{Addr: kafkago.TCP(cfg.Brokers...), Transport: transport, Timeout: cfg.RequestTimeout}
	meta, err := client.Metadata(ctx, &kafkago.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return nil, fmt.Errorf("kafka: the partitions of %s: %w", topic, err)
	}
	var ids []int
	for _, t := range meta.Topics {
		if t.Error != nil {
			return nil, fmt.Errorf("kafka: the partitions of %s: %w", topic, t.Error)
		}
		for _, p := range t.Partitions {
			ids = append(ids, p.ID)
		}
	}
	resp, err := client.OffsetFetch(ctx, &kafkago.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: ids}})
	if err == nil {
		err = resp.Error
	}
	if errors.Is(err, kafkago.GroupIdNotFound) { // a group that never committed
		out := make(map[int]int64, len(ids))
		for _, id := range ids {
			out[id] = -1
		}
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("kafka: the offsets of group %s on %s: %w", group, topic, err)
	}
	out := make(map[int]int64, len(ids))
	for _, p := range resp.Topics[topic] {
		if p.Error != nil {
			return nil, fmt.Errorf("kafka: the offset of group %s on %s partition %d: %w", group, topic, p.Partition, p.Error)
		}
		out[p.Partition] = p.CommittedOffset
	}
	return out, nil
}

// CaughtUp reports whether rebuild's positions reach live's on every
// partition (positions as MirroredOffsets returns them; a partition
// missing from rebuild counts as -1), and returns how far each partition
// that does not is behind.
func CaughtUp(rebuild, live map[int]int64) (bool, map[int]int64) {
	behind := map[int]int64{}
	for p, l := range live {
		r, ok := rebuild[p]
		if !ok {
			r = -1
		}
		if l > max(r, 0) {
			behind[p] = l - max(r, 0)
		}
	}
	return len(behind) == 0, behind
}
