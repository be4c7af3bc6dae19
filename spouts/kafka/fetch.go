package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// limits bound one read of a partition.
type limits struct {
	maxRecords int
	maxBytes   int   // key, value and header bytes
	firstBytes int   // the first record is taken if it has at most max(firstBytes, maxBytes)
	until      int64 // stop before this offset; -1 means no bound
}

// readResult is what a read got.
type readResult struct {
	next   int64 // the offset after the last record read (the start if none)
	count  int   // records read
	bytes  int   // their key, value and header bytes
	capped bool  // a limit ended the read with more records in the log
}

// maxFetchBytes bounds the bytes one fetch request asks for.
const maxFetchBytes = 4 << 20

// fetchBytes is what a fetch asks for to read about budget bytes of keys,
// values and headers: twice as much (records carry offsets, timestamps and
// batch framing), so that a batch needs one fetch rather than a second,
// synchronous one for its last few records; at most maxFetchBytes. The
// budget is clamped before it is doubled: a re-emit reads with no byte
// bound (math.MaxInt).
func fetchBytes(budget int) int64 {
	return int64(min(2*min(max(budget, 0), maxFetchBytes)+64<<10, maxFetchBytes))
}

// read fetches the records of tp from offset from, within lim, decodes
// them and emits their tuples to c. It does not wait for records: it stops
// at the log end as the broker knows it. Records the decoder rejects go to
// the dead-letter topic before read returns. An offset out of range at the
// start is an *OutOfRangeError; later (retention caught up with the read)
// it ends the batch early. first, if not nil, is a response already
// fetched from offset from (a read-ahead), used instead of the first
// fetch.
func (s *Spout) read(ctx context.Context, a txn.Attempt, tp topicPartition, from int64, lim limits,
	first *kafkago.FetchResponse, c spout.Collector) (readResult, error) {
	res := readResult{next: from}
	bytes := 0
	var bad []badRecord
	var hwm int64 = -1
	for {
		if (lim.until >= 0 && res.next >= lim.until) || res.count >= lim.maxRecords || (res.count > 0 && bytes >= lim.maxBytes) {
			res.capped = hwm < 0 || res.next < hwm
			break
		}
		resp, err := first, error(nil)
		first = nil
		if resp == nil {
			if err := s.backoff.wait(ctx); err != nil {
				return res, err
			}
			resp, err = s.client.Fetch(ctx, &kafkago.FetchRequest{
				Topic: tp.topic, Partition: tp.partition, Offset: res.next,
				MinBytes: 0, MaxBytes: fetchBytes(lim.maxBytes - bytes),
			})
			if err == nil {
				err = resp.Error
			}
		}
		if errors.Is(err, kafkago.OffsetOutOfRange) {
			if res.count > 0 {
				break // retention deleted the rest: end the batch here
			}
			return res, s.outOfRange(ctx, tp, res.next)
		}
		if err != nil {
			return res, s.brokerError(tp, fmt.Sprintf("fetch from offset %d", res.next), err)
		}
		s.backoff.succeed()
		hwm = resp.HighWatermark
		got, stop, err := s.consume(a, tp, resp.Records, lim, &res, &bytes, c, &bad)
		if err != nil {
			return res, s.brokerError(tp, fmt.Sprintf("read records after offset %d", res.next), err)
		}
		if stop {
			res.capped = res.next < hwm
			break
		}
		if got == 0 || res.next >= hwm {
			break
		}
	}
	if hwm >= 0 {
		s.stats.position(tp, res.next, hwm)
	}
	if len(bad) > 0 {
		if err := s.deadLetter(ctx, a, tp, from, bad); err != nil {
			return res, err
		}
	}
	s.stats.emitted.Add(uint64(res.count - len(bad)))
	res.bytes = bytes
	return res, nil
}

// consume reads the records of one fetch response into c. stop says that
// a limit was reached.
func (s *Spout) consume(a txn.Attempt, tp topicPartition, records kafkago.RecordReader, lim limits,
	res *readResult, bytes *int, c spout.Collector, bad *[]badRecord) (got int, stop bool, err error) {
	var raw *rawValues
	if _, ok := s.cfg.Decoder.(RawFields); ok {
		raw = newRawValues(tp)
	}
	for {
		r, err := records.ReadRecord()
		if errors.Is(err, io.EOF) {
			return got, false, nil
		}
		if err != nil {
			return got, false, err
		}
		if r.Offset < res.next {
			continue // a record batch can start before the offset asked for
		}
		if lim.until >= 0 && r.Offset >= lim.until {
			return got, true, nil
		}
		if res.count >= lim.maxRecords {
			return got, true, nil
		}
		size := recordSize(r)
		limit := lim.maxBytes
		if res.count == 0 {
			limit = max(limit, lim.firstBytes)
		}
		if *bytes+size > limit {
			return got, true, nil
		}
		rec, err := toRecord(tp, r)
		if err != nil {
			return got, false, err
		}
		if raw != nil {
			c.Emit(raw.values(rec)...)
		} else if values, derr := s.decode(rec); derr != nil {
			*bad = append(*bad, badRecord{rec: rec, err: derr})
		} else {
			c.Emit(values...)
		}
		got++
		res.count++
		res.next = r.Offset + 1
		*bytes += size
	}
}

// recordSize is the bytes of r the byte caps count: key, value and
// headers (keys and values).
func recordSize(r *kafkago.Record) int {
	size := 0
	if r.Key != nil {
		size += r.Key.Len()
	}
	if r.Value != nil {
		size += r.Value.Len()
	}
	for _, h := range r.Headers {
		size += len(h.Key) + len(h.Value)
	}
	return size
}

// toRecord copies a kafka-go record into a Record.
func toRecord(tp topicPartition, r *kafkago.Record) (Record, error) {
	rec := Record{Topic: tp.topic, Partition: tp.partition, Offset: r.Offset, Time: r.Time}
	// Key and value share one allocation.
	klen, vlen := 0, 0
	if r.Key != nil {
		klen = r.Key.Len()
	}
	if r.Value != nil {
		vlen = r.Value.Len()
	}
	if buf := make([]byte, klen+vlen); klen+vlen > 0 {
		if r.Key != nil {
			rec.Key = buf[:klen:klen]
			if _, err := io.ReadFull(r.Key, rec.Key); err != nil {
				return rec, err
			}
		}
		if r.Value != nil {
			rec.Value = buf[klen:]
			if _, err := io.ReadFull(r.Value, rec.Value); err != nil {
				return rec, err
			}
		}
	} else {
		if r.Key != nil {
			rec.Key = []byte{}
		}
		if r.Value != nil {
			rec.Value = []byte{}
		}
	}
	if len(r.Headers) > 0 {
		rec.Headers = make([]Header, len(r.Headers))
		for i, h := range r.Headers {
			rec.Headers[i] = Header{Key: h.Key, Value: h.Value}
		}
	}
	return rec, nil
}

// outOfRange builds the error of a fetch of tp at offset that the broker
// refused as out of range, with the log's current bounds.
func (s *Spout) outOfRange(ctx context.Context, tp topicPartition, offset int64) error {
	oor := &OutOfRangeError{Topic: tp.topic, Partition: tp.partition, Offset: offset, Earliest: -1, End: -1}
	first, end, err := s.bounds(ctx, tp)
	if err != nil {
		s.cfg.Logger.Warn("kafka spout: cannot list the bounds of an out-of-range partition", "topic", tp.topic,
			"partition", tp.partition, "offset", offset, "err", err)
		return oor
	}
	oor.Earliest, oor.End = first, end
	return oor
}

// bounds returns the earliest offset and the end offset of tp's log.
func (s *Spout) bounds(ctx context.Context, tp topicPartition) (first, end int64, err error) {
	resp, err := s.client.ListOffsets(ctx, &kafkago.ListOffsetsRequest{Topics: map[string][]kafkago.OffsetRequest{
		tp.topic: {kafkago.FirstOffsetOf(tp.partition), kafkago.LastOffsetOf(tp.partition)},
	}})
	if err != nil {
		return 0, 0, s.brokerError(tp, "list offsets", err)
	}
	for _, p := range resp.Topics[tp.topic] {
		if p.Partition == tp.partition {
			if p.Error != nil {
				return 0, 0, s.brokerError(tp, "list offsets", p.Error)
			}
			return p.FirstOffset, p.LastOffset, nil
		}
	}
	return 0, 0, s.brokerError(tp, "list offsets", errors.New("no answer for the partition"))
}

// offsetFor resolves a start position to an offset of tp.
func (s *Spout) offsetFor(ctx context.Context, tp topicPartition, at StartPosition) (int64, error) {
	if err := s.backoff.wait(ctx); err != nil {
		return 0, err
	}
	switch at.kind {
	case startEarliest, startLatest:
		first, end, err := s.bounds(ctx, tp)
		if err != nil {
			return 0, err
		}
		if at.kind == startEarliest {
			return first, nil
		}
		return end, nil
	}
	resp, err := s.client.ListOffsets(ctx, &kafkago.ListOffsetsRequest{Topics: map[string][]kafkago.OffsetRequest{
		tp.topic: {kafkago.TimeOffsetOf(tp.partition, at.at)},
	}})
	if err != nil {
		return 0, s.brokerError(tp, "list offsets at "+at.String(), err)
	}
	for _, p := range resp.Topics[tp.topic] {
		if p.Partition != tp.partition {
			continue
		}
		if p.Error != nil {
			return 0, s.brokerError(tp, "list offsets at "+at.String(), p.Error)
		}
		best := int64(-1)
		for off := range p.Offsets {
			if off >= 0 && (best < 0 || off < best) {
				best = off
			}
		}
		if best >= 0 {
			return best, nil
		}
		// No record at or after the time: start at the end.
		_, end, err := s.bounds(ctx, tp)
		return end, err
	}
	return 0, s.brokerError(tp, "list offsets at "+at.String(), errors.New("no answer for the partition"))
}
