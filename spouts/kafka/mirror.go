package kafka

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/squallstream/squall/internal/clock"
	"github.com/squallstream/squall/txn"
)

// mirror commits the spout's committed progress to the consumer group
// MirrorGroup, so that standard lag tools (kafka-consumer-groups.sh,
// Burrow, exporters) see it. The coordination store stays the source of
// truth: the spout never reads these offsets back.
//
// What is mirrored for a partition is where its last committed batch
// ended, with that batch's txid in the commit metadata ("squall
// topology=<id> txid=<n>"). The emitters remember where their batches end
// (ends.go) and, when the runtime tells them a txid committed
// (spout.Committer), note the end of each partition's latest batch up to
// that txid here. Writes are driven by those notes, not by a ticker: the
// first note after a quiet MirrorInterval is written at once; notes that
// arrive within the interval after a write are written together when it
// ends, the newest position of each partition winning. So the mirror
// writes at most once per MirrorInterval and the last positions noted are
// always written, at the latest when the spout closes. A failed write is
// retried an interval later unless newer positions replaced it. Commits
// are "simple" ones (no group membership).
type mirror struct {
	clock    clock.Clock
	interval time.Duration
	log      *slog.Logger
	group    string
	// write commits positions to the group: commitOffsets, or a test's
	// fake.
	write func(ctx context.Context, batch map[topicPartition]mirrorPos) error

	kick chan struct{} // capacity 1: positions were noted
	done chan struct{}
	quit chan struct{}

	mu      sync.Mutex
	pending map[topicPartition]mirrorPos
	failing bool
}

type mirrorPos struct {
	offset int64
	txid   txn.TxID
}

// mirrorConfig is what a mirror needs from its spout.
type mirrorConfig struct {
	clock    clock.Clock
	interval time.Duration
	log      *slog.Logger
	group    string
	write    func(ctx context.Context, batch map[topicPartition]mirrorPos) error
}

func startMirror(s *Spout) *mirror {
	return newMirror(mirrorConfig{clock: s.cfg.Clock, interval: s.cfg.MirrorInterval, log: s.cfg.Logger,
		group: s.cfg.MirrorGroup, write: s.commitOffsets})
}

// newMirror starts a mirror's goroutine; stop ends it.
func newMirror(c mirrorConfig) *mirror {
	m := &mirror{clock: c.clock, interval: c.interval, log: c.log, group: c.group, write: c.write,
		kick: make(chan struct{}, 1), done: make(chan struct{}), quit: make(chan struct{}),
		pending: map[topicPartition]mirrorPos{}}
	go m.run()
	return m
}

// note records that tp's batches up to txid, which committed, ended at
// offset. A note older than one already pending for tp is dropped.
func (m *mirror) note(tp topicPartition, offset int64, txid txn.TxID) {
	m.mu.Lock()
	if old, ok := m.pending[tp]; !ok || old.txid <= txid {
		m.pending[tp] = mirrorPos{offset: offset, txid: txid}
	}
	m.mu.Unlock()
	m.poke()
}

// poke wakes the goroutine without blocking; pokes not yet received merge.
func (m *mirror) poke() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

func (m *mirror) run() {
	defer close(m.done)
	var last time.Time // start of the last write; zero before the first
	for {
		select {
		case <-m.quit:
			_, _ = m.flush() // the last positions
			return
		case <-m.kick:
		}
		if !last.IsZero() {
			if wait := m.interval - clock.Since(m.clock, last); wait > 0 {
				t := m.clock.NewTimer(wait)
				select {
				case <-m.quit:
					t.Stop()
					_, _ = m.flush()
					return
				case <-t.C():
				}
			}
		}
		// This write takes every position noted so far: a poke of one
		// noted since the wake-up is spent.
		select {
		case <-m.kick:
		default:
		}
		now := m.clock.Now()
		wrote, err := m.flush()
		if wrote {
			last = now
		}
		if err != nil {
			m.poke() // try again an interval from now
		}
	}
}

// stop makes a last commit and waits for the goroutine to end.
func (m *mirror) stop() {
	close(m.quit)
	<-m.done
}

// flush writes the pending positions, if any, and reports whether it
// tried and how that went.
func (m *mirror) flush() (wrote bool, err error) {
	m.mu.Lock()
	batch := m.pending
	m.pending = map[topicPartition]mirrorPos{}
	m.mu.Unlock()
	if len(batch) == 0 {
		return false, nil
	}
	err = m.write(context.Background(), batch)
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
			m.log.Warn("kafka spout: mirroring offsets to the consumer group failed (the coordination store is unaffected)",
				"group", m.group, "err", err)
		}
	} else if m.failing {
		m.log.Info("kafka spout: mirroring offsets to the consumer group works again", "group", m.group)
	}
	m.failing = err != nil
	return true, err
}

// commitOffsets commits batch to MirrorGroup with a simple commit.
func (s *Spout) commitOffsets(ctx context.Context, batch map[topicPartition]mirrorPos) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	topics := map[string][]kafkago.OffsetCommit{}
	for tp, pos := range batch {
		topics[tp.topic] = append(topics[tp.topic], kafkago.OffsetCommit{
			Partition: tp.partition, Offset: pos.offset,
			Metadata: fmt.Sprintf("squall topology=%s txid=%d", s.cfg.TopologyID, pos.txid),
		})
	}
	resp, err := s.client.OffsetCommit(ctx, &kafkago.OffsetCommitRequest{GroupID: s.cfg.MirrorGroup, GenerationID: -1, Topics: topics})
	if err != nil {
		return err
	}
	for _, ps := range resp.Topics {
		for _, p := range ps {
			if p.Error != nil {
				return p.Error
			}
		}
	}
	return nil
}
