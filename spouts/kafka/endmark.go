package kafka

import (
	"context"
	"fmt"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/squallstream/squall/trident/spout"
)

// The caught-up mark (trident.Running.WaitCaughtUp): the spout's lister
// is a spout.EndMarker and Meta a spout.Positioned, so a topology reading
// the spout can wait until its committed batches reach the end offsets
// of every partition at the call.

var (
	_ spout.EndMarker  = (*lister)(nil)
	_ spout.Positioned = Meta{}
)

// End implements spout.Positioned: the offset just past the batch, where
// the partition's next batch starts (Next).
func (m Meta) End() int64 { return m.Next }

// EndMark implements spout.EndMarker: for every partition of the spout's
// topics, its end offset now (one ListOffsets request to the brokers). A
// partition whose log holds no record (empty, or emptied by retention)
// is left out: there is nothing to catch up on.
func (l *lister) EndMark(ctx context.Context) (map[spout.Partition]int64, error) {
	ps, err := l.Partitions(ctx)
	if err != nil {
		return nil, err
	}
	req := &kafkago.ListOffsetsRequest{Topics: map[string][]kafkago.OffsetRequest{}}
	want := map[topicPartition]bool{}
	for _, p := range ps {
		tp, err := parsePartition(p)
		if err != nil {
			return nil, err
		}
		want[tp] = true
		req.Topics[tp.topic] = append(req.Topics[tp.topic], kafkago.FirstOffsetOf(tp.partition), kafkago.LastOffsetOf(tp.partition))
	}
	resp, err := l.s.client.ListOffsets(ctx, req)
	if err != nil {
		marked, _ := classify(err)
		return nil, fmt.Errorf("kafka: listing the end offsets of %v: %w", l.s.cfg.Topics, marked)
	}
	out := make(map[spout.Partition]int64, len(ps))
	for topic, parts := range resp.Topics {
		for _, p := range parts {
			tp := topicPartition{topic: topic, partition: p.Partition}
			if !want[tp] {
				continue
			}
			if p.Error != nil {
				marked, _ := classify(p.Error)
				return nil, fmt.Errorf("kafka: listing the end offset of %s: %w", tp, marked)
			}
			delete(want, tp)
			if p.LastOffset > p.FirstOffset {
				out[tp.name()] = p.LastOffset
			}
		}
	}
	if len(want) > 0 {
		return nil, fmt.Errorf("kafka: listing the end offsets of %v: no answer for %d partitions", l.s.cfg.Topics, len(want))
	}
	return out, nil
}
