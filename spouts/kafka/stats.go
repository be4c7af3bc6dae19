package kafka

import (
	"maps"
	"sync"
	"sync/atomic"
)

// Stats are the spout's counters since New. Replays count again, except
// in DeadLettered: a record's letter is written once.
type Stats struct {
	// Emitted counts the records read and decoded into tuples.
	Emitted uint64
	// DecodeFailures counts the records the Decoder rejected, once their
	// letter is in the dead-letter topic: it is always DeadLettered plus
	// DeadLettersSkipped (a record whose letter could not be written yet
	// counts when a replay writes it).
	DecodeFailures uint64
	// DecoderPanics counts the decode failures that were panics of the
	// Decoder (recovered; they are also in DecodeFailures).
	DecoderPanics uint64
	// DeadLettered counts the rejected records written to the dead-letter
	// topic, DeadLettersTruncated those of them written as truncated
	// letters (the full letter was too large for the topic or refused).
	DeadLettered         uint64
	DeadLettersTruncated uint64
	// DeadLettersSkipped counts the rejected records not written again
	// because their letter is already in the dead-letter topic (a replay,
	// or a restart after the letter was written).
	// DeadLetterScans counts the times the spout read the dead-letter
	// topic back to learn which letters are there.
	DeadLettersSkipped uint64
	DeadLetterScans    uint64
	// OutOfRangeSkips counts the batches that skipped to the earliest
	// offset (SkipToEarliest), and OffsetsLost the offsets they skipped.
	OutOfRangeSkips uint64
	OffsetsLost     uint64
	// Reconnects counts the times the spout dropped its connections after
	// a failed request.
	Reconnects uint64
	// Partitions are the partitions read, by name ("topic@3").
	Partitions map[string]PartitionStats
}

// PartitionStats is what the last batch of a partition saw.
type PartitionStats struct {
	// Next is the offset after the partition's last batch.
	Next int64
	// LogEnd is the partition's high watermark at that batch.
	LogEnd int64
	// Lag is LogEnd minus Next: the records waiting to be read.
	Lag int64
}

type stats struct {
	emitted                             atomic.Uint64
	decoderPanics, deadLettersTruncated atomic.Uint64
	outOfRangeSkips, offsetsLost        atomic.Uint64
	reconnects, deadLetterScans         atomic.Uint64

	mu         sync.Mutex
	partitions map[string]PartitionStats
	letters    letterCounts // under mu, so a snapshot never sees them disagree
}

// letterCounts are the rejected records and what became of their letters.
type letterCounts struct{ decodeFailures, deadLettered, deadLettersSkipped uint64 }

// letterSettled counts a rejected record whose letter is now in the
// dead-letter topic: written by this call (written) or found there.
func (s *stats) letterSettled(written bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.letters.decodeFailures++
	if written {
		s.letters.deadLettered++
	} else {
		s.letters.deadLettersSkipped++
	}
}

func (s *stats) position(tp topicPartition, next, logEnd int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.partitions == nil {
		s.partitions = map[string]PartitionStats{}
	}
	s.partitions[tp.String()] = PartitionStats{Next: next, LogEnd: logEnd, Lag: max(logEnd-next, 0)}
}

// Stats returns a snapshot of the spout's counters.
func (s *Spout) Stats() Stats {
	st := &s.stats
	st.mu.Lock()
	ps := maps.Clone(st.partitions)
	letters := st.letters
	st.mu.Unlock()
	if ps == nil {
		ps = map[string]PartitionStats{}
	}
	return Stats{
		Emitted:              st.emitted.Load(),
		DecodeFailures:       letters.decodeFailures,
		DecoderPanics:        st.decoderPanics.Load(),
		DeadLettered:         letters.deadLettered,
		DeadLettersTruncated: st.deadLettersTruncated.Load(),
		DeadLettersSkipped:   letters.deadLettersSkipped,
		DeadLetterScans:      st.deadLetterScans.Load(),
		OutOfRangeSkips:      st.outOfRangeSkips.Load(),
		OffsetsLost:          st.offsetsLost.Load(),
		Reconnects:           st.reconnects.Load(),
		Partitions:           ps,
	}
}
