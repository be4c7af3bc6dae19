package kafka

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"strconv"
	"sync"
	"time"

	kafkago "github.com/segmentio/kafka-go"
)

// Exactly one dead letter per rejected record.
//
// A letter's identity is (TopologyID, topic, partition, offset) of the
// record it names, carried in its squall.topology, squall.topic,
// squall.partition and squall.offset headers. The dead-letter topic is its
// own ledger of which identities have a letter: every letter of one source
// partition goes to one partition of the dead-letter topic (letterBalancer),
// and before the spout writes letters for a source partition it knows of
// for the first time (after New, after the partition came back to a task,
// after a write whose outcome is unknown) it reads that partition of the
// dead-letter topic back from its end (scanLetters). A letter is written
// only for an identity that is not there, so replays, restarts and crashes
// between a letter's write and the batch's commit do not write it twice.
//
// The ledger never drops a letter: an identity counts as written only when
// the broker acknowledged its letter or the scan read it back. What it
// gets wrong errs toward a duplicate: a write by a superseded worker
// racing the current one, partitions added to the dead-letter topic
// between a write and a scan, or letters written before this scheme (they
// were balanced by the record's key).

// letterLedger is, per source partition, the offsets known to have their
// letter in the dead-letter topic.
type letterLedger struct {
	mu    sync.Mutex
	parts map[topicPartition]*partLedger
}

// partLedger knows every letter of its source partition at offsets from
// floor on.
type partLedger struct {
	floor   int64
	written map[int64]struct{}
}

// maxLedgerOffsets bounds the offsets a partLedger keeps: beyond it the
// floor moves up to the start of the current read (a replay starting
// lower then scans again).
const maxLedgerOffsets = 4096

// lookup returns the ledger of tp if it knows the letters from offset from
// on, else nil.
func (l *letterLedger) lookup(tp topicPartition, from int64) *partLedger {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.parts[tp]
	if p == nil || p.floor > from {
		return nil
	}
	return p
}

// install records what a scan of tp from offset from found.
func (l *letterLedger) install(tp topicPartition, from int64, written map[int64]struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.parts == nil {
		l.parts = map[topicPartition]*partLedger{}
	}
	l.parts[tp] = &partLedger{floor: from, written: written}
}

// has reports whether the letter of tp at off is known to be written.
func (l *letterLedger) has(tp topicPartition, off int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.parts[tp]
	if p == nil {
		return false
	}
	_, ok := p.written[off]
	return ok
}

// add records the letter of tp at off as written (acknowledged), and
// trims the ledger of tp down to offsets from from on when it is large.
func (l *letterLedger) add(tp topicPartition, from, off int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.parts[tp]
	if p == nil || off < p.floor {
		return
	}
	p.written[off] = struct{}{}
	if len(p.written) > maxLedgerOffsets && from > p.floor {
		p.floor = from
		for o := range p.written {
			if o < from {
				delete(p.written, o)
			}
		}
	}
}

// forget drops what is known of tp: a write to the dead-letter topic
// whose outcome is unknown, or a partition that left the task. The next
// letter of tp scans again.
func (l *letterLedger) forget(tp topicPartition) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.parts, tp)
}

// letterKey is the string the dead-letter partition of a source partition
// is hashed from.
func letterKey(topologyID, topic, partition string) string {
	return topologyID + "\x00" + topic + "\x00" + partition
}

// letterPartition is the dead-letter partition, of n, that receives the
// letters of a source partition: FNV-1a of the letterKey modulo n.
func letterPartition(key string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % uint32(n))
}

// letterBalancer sends every letter of one source partition (read by one
// topology id) to one partition of the dead-letter topic, by the
// coordinates in its headers, whatever the record's key.
type letterBalancer struct{}

// Balance implements kafkago.Balancer.
func (letterBalancer) Balance(m kafkago.Message, partitions ...int) int {
	var topology, topic, partition string
	for _, h := range m.Headers {
		switch h.Key {
		case HeaderTopology:
			topology = string(h.Value)
		case HeaderTopic:
			topic = string(h.Value)
		case HeaderPartition:
			partition = string(h.Value)
		}
	}
	return partitions[letterPartition(letterKey(topology, topic, partition), len(partitions))]
}

// scanChunk is how many dead-letter offsets a scan reads at a time, from
// the end back.
const scanChunk = 1000

// knownLetters returns the ledger of tp, scanning the dead-letter topic
// when the spout does not know tp's letters from offset from on.
func (s *Spout) knownLetters(ctx context.Context, tp topicPartition, from int64) error {
	if s.letters.lookup(tp, from) != nil {
		return nil
	}
	start := s.cfg.Clock.Now()
	written, read, err := s.scanLetters(ctx, tp, from)
	if err != nil {
		return err
	}
	s.stats.deadLetterScans.Add(1)
	s.letters.install(tp, from, written)
	s.cfg.Logger.Info("kafka spout: read the dead-letter topic back for letters already written",
		"topic", tp.topic, "partition", tp.partition, "from_offset", from, "dead_letter_topic", s.cfg.DeadLetterTopic,
		"letters_read", read, "found", len(written), "took", s.cfg.Clock.Now().Sub(start).Round(time.Millisecond))
	return nil
}

// scanLetters reads the dead-letter partition of tp from its end back and
// returns the offsets of tp, from offset from on, that have a letter of
// this topology id. It stops at the first letter of tp before from (the
// letters of a source partition are written in the order its offsets are
// read, so the letters before it are all of earlier offsets), or at the
// start of the log. read is the number of letters read.
func (s *Spout) scanLetters(ctx context.Context, tp topicPartition, from int64) (written map[int64]struct{}, read int, err error) {
	ctx, cancel := context.WithTimeout(ctx, 4*s.cfg.RequestTimeout)
	defer cancel()
	dlq := s.cfg.DeadLetterTopic
	n, err := s.partitionCount(ctx, dlq)
	if err != nil {
		return nil, 0, s.brokerError(tp, "list the partitions of "+dlq, err)
	}
	part := strconv.Itoa(tp.partition)
	dtp := topicPartition{topic: dlq, partition: letterPartition(letterKey(s.cfg.TopologyID, tp.topic, part), n)}
	first, end, err := s.bounds(ctx, dtp)
	if err != nil {
		return nil, 0, err
	}
	written = map[int64]struct{}{}
	for hi := end; hi > first; {
		lo := max(first, hi-scanChunk)
		coords, err := s.readLetters(ctx, dtp, lo, hi)
		if err != nil {
			return nil, read, err
		}
		read += len(coords)
		done := false
		for _, c := range coords {
			if c.topology != s.cfg.TopologyID || c.topic != tp.topic || c.partition != part {
				continue
			}
			if c.offset >= from {
				written[c.offset] = struct{}{}
			} else {
				done = true
			}
		}
		if done {
			break
		}
		hi = lo
	}
	return written, read, nil
}

// letterCoords are the identity headers of a letter.
type letterCoords struct {
	topology, topic, partition string
	offset                     int64
}

// readLetters returns the identities of the letters at offsets [lo, hi)
// of dtp, a partition of the dead-letter topic.
func (s *Spout) readLetters(ctx context.Context, dtp topicPartition, lo, hi int64) ([]letterCoords, error) {
	var out []letterCoords
	for next := lo; next < hi; {
		resp, err := s.client.Fetch(ctx, &kafkago.FetchRequest{
			Topic: dtp.topic, Partition: dtp.partition, Offset: next, MinBytes: 0, MaxBytes: maxFetchBytes,
		})
		if err == nil {
			err = resp.Error
		}
		if err != nil {
			return nil, s.brokerError(dtp, fmt.Sprintf("read the dead letters from offset %d", next), err)
		}
		got := 0
		for {
			r, err := resp.Records.ReadRecord()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, s.brokerError(dtp, fmt.Sprintf("read the dead letters from offset %d", next), err)
			}
			if r.Offset < next {
				continue
			}
			if r.Offset >= hi {
				break
			}
			got++
			next = r.Offset + 1
			if c, ok := coordsOf(r.Headers); ok {
				out = append(out, c)
			}
		}
		if got == 0 {
			// Nothing readable in the rest of [lo, hi) (transaction
			// markers, compaction): what is not read is not counted as
			// written.
			break
		}
	}
	return out, nil
}

// coordsOf reads a letter's identity from its headers.
func coordsOf(headers []kafkago.Header) (letterCoords, bool) {
	var c letterCoords
	seen := 0
	for _, h := range headers {
		switch h.Key {
		case HeaderTopology:
			c.topology, seen = string(h.Value), seen|1
		case HeaderTopic:
			c.topic, seen = string(h.Value), seen|2
		case HeaderPartition:
			c.partition, seen = string(h.Value), seen|4
		case HeaderOffset:
			off, err := strconv.ParseInt(string(h.Value), 10, 64)
			if err != nil {
				return c, false
			}
			c.offset, seen = off, seen|8
		}
	}
	return c, seen == 15
}

// partitionCount returns the number of partitions of topic.
func (s *Spout) partitionCount(ctx context.Context, topic string) (int, error) {
	md, err := s.client.Metadata(ctx, &kafkago.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return 0, err
	}
	for _, t := range md.Topics {
		if t.Name != topic {
			continue
		}
		if t.Error != nil {
			return 0, t.Error
		}
		if len(t.Partitions) == 0 {
			return 0, fmt.Errorf("%w: %q has no partitions", ErrUnknownTopic, topic)
		}
		return len(t.Partitions), nil
	}
	return 0, fmt.Errorf("%w: %q", ErrUnknownTopic, topic)
}
