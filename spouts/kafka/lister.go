package kafka

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/trident/spout"
)

// lister is the allocator side of the spout (Storm's
// KafkaTridentSpoutCoordinator): the partitions of the subscribed topics,
// listed again when the last list is RefreshInterval/2 old (the
// transport's metadata cache adds at most another half), so that a
// partition added while running joins within RefreshInterval. It is safe
// for concurrent use: the opaque and transactional sources of one Spout
// share it.
type lister struct {
	s *Spout // its Config.Clock times the refreshes

	mu      sync.Mutex
	cached  []spout.Partition
	at      time.Time
	initial map[spout.Partition]bool // the first list's partitions
}

// joinedLater reports whether p was not in the spout's first list of
// partitions: it was added while the spout ran, so all its records are
// new to the topology.
func (l *lister) joinedLater(p spout.Partition) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.initial != nil && !l.initial[p]
}

// Partitions implements spout.Lister. If listing fails after an earlier
// success, the last list is returned (and the failure logged): the
// partitions of a batch may lag behind, never vanish.
func (l *lister) Partitions(ctx context.Context) ([]spout.Partition, error) {
	if l.s.closed.Load() {
		return nil, ErrClosed
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.s.cfg.Clock.Now()
	if l.cached != nil && now.Sub(l.at) < l.s.cfg.RefreshInterval/2 {
		return slices.Clone(l.cached), nil
	}
	ps, err := l.list(ctx)
	if err != nil {
		if l.cached != nil {
			l.s.cfg.Logger.Warn("kafka spout: listing partitions failed; keeping the last list", "topics", l.s.cfg.Topics, "err", err)
			return slices.Clone(l.cached), nil
		}
		return nil, err
	}
	if added := len(ps) - len(l.cached); l.cached != nil && added != 0 {
		l.s.cfg.Logger.Info("kafka spout: partitions changed", "topics", l.s.cfg.Topics, "before", len(l.cached), "now", len(ps))
	}
	if l.initial == nil {
		l.initial = make(map[spout.Partition]bool, len(ps))
		for _, p := range ps {
			l.initial[p] = true
		}
	}
	l.cached, l.at = ps, now
	return slices.Clone(ps), nil
}

func (l *lister) list(ctx context.Context) ([]spout.Partition, error) {
	md, err := l.s.client.Metadata(ctx, &kafkago.MetadataRequest{Topics: l.s.cfg.Topics})
	if err != nil {
		marked, _ := classify(err)
		return nil, fmt.Errorf("kafka: listing the partitions of %v: %w", l.s.cfg.Topics, marked)
	}
	var ps []spout.Partition
	for _, t := range md.Topics {
		if !slices.Contains(l.s.cfg.Topics, t.Name) {
			continue
		}
		if t.Error != nil {
			return nil, fmt.Errorf("kafka: listing the partitions of topic %s: %w", t.Name, failure.Reported(t.Error))
		}
		for _, p := range t.Partitions {
			ps = append(ps, topicPartition{topic: t.Name, partition: p.ID}.name())
		}
	}
	slices.Sort(ps)
	return ps, nil
}
