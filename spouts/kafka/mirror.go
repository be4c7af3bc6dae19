package kafka

import (
	"context"
	"fmt"
	"sync"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/squallstream/squall/state"
)

// mirror commits the spout's progress to the consumer group MirrorGroup,
// so that standard lag tools (kafka-consumer-groups.sh, Burrow, exporters)
// see it. The coordination store stays the source of truth: the spout
// never reads these offsets back.
//
// What is mirrored for a partition is where its previous batch ended when
// a new batch starts (Emit's prev), with that batch's txid in the commit
// metadata ("squall topology=<id> txid=<n>"). That batch has been emitted
// and processed; it may still be committing, so the mirror can run ahead
// of the committed state by the batches in flight, and go back if a batch
// is replayed. Commits are "simple" ones (no group membership), every
// MirrorInterval, of the partitions that moved.
type mirror struct {
	s    *Spout
	done chan struct{}
	quit chan struct{}

	mu      sync.Mutex
	pending map[topicPartition]mirrorPos
	failing bool
}

type mirrorPos struct {
	offset int64
	txid   state.TxID
}

func startMirror(s *Spout) *mirror {
	m := &mirror{s: s, done: make(chan struct{}), quit: make(chan struct{}), pending: map[topicPartition]mirrorPos{}}
	go m.run()
	return m
}

func (m *mirror) note(tp topicPartition, offset int64, txid state.TxID) {
	m.mu.Lock()
	m.pending[tp] = mirrorPos{offset: offset, txid: txid}
	m.mu.Unlock()
}

func (m *mirror) run() {
	defer close(m.done)
	t := time.NewTicker(m.s.cfg.MirrorInterval)
	defer t.Stop()
	for {
		select {
		case <-m.quit:
			m.flush() // the last positions
			return
		case <-t.C:
			m.flush()
		}
	}
}

// stop makes a last commit and waits for the goroutine to end.
func (m *mirror) stop() {
	close(m.quit)
	<-m.done
}

func (m *mirror) flush() {
	m.mu.Lock()
	batch := m.pending
	m.pending = map[topicPartition]mirrorPos{}
	m.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), m.s.cfg.RequestTimeout)
	defer cancel()
	topics := map[string][]kafkago.OffsetCommit{}
	for tp, pos := range batch {
		topics[tp.topic] = append(topics[tp.topic], kafkago.OffsetCommit{
			Partition: tp.partition, Offset: pos.offset,
			Metadata: fmt.Sprintf("squall topology=%s txid=%d", m.s.cfg.TopologyID, pos.txid),
		})
	}
	resp, err := m.s.client.OffsetCommit(ctx, &kafkago.OffsetCommitRequest{GroupID: m.s.cfg.MirrorGroup, GenerationID: -1, Topics: topics})
	if err == nil {
	check:
		for _, ps := range resp.Topics {
			for _, p := range ps {
				if p.Error != nil {
					err = p.Error
					break check
				}
			}
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		// Keep the positions for the next try, unless newer ones came.
		for tp, pos := range batch {
			if _, newer := m.pending[tp]; !newer {
				m.pending[tp] = pos
			}
		}
		if !m.failing {
			m.s.cfg.Logger.Warn("kafka spout: mirroring offsets to the consumer group failed (the coordination store is unaffected)",
				"group", m.s.cfg.MirrorGroup, "err", err)
		}
	} else if m.failing {
		m.s.cfg.Logger.Info("kafka spout: mirroring offsets to the consumer group works again", "group", m.s.cfg.MirrorGroup)
	}
	m.failing = err != nil
}
