package coordstore

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/squallstream/squall/state"
)

// AppendRecord appends the wire form of r that durable stores keep: the
// committed txid, the number of attempts and each (txid, attempt), then,
// if there are any, the number of failure counts and each (txid, count),
// all as uvarints. Records written before failure counts existed end after
// the attempts and still decode.
func AppendRecord(b []byte, r Record) []byte {
	b = binary.AppendUvarint(b, uint64(r.Committed))
	b = binary.AppendUvarint(b, uint64(len(r.Attempts)))
	b = appendPairs(b, r.Attempts)
	if len(r.Failures) > 0 {
		b = binary.AppendUvarint(b, uint64(len(r.Failures)))
		b = appendPairs(b, r.Failures)
	}
	return b
}

// appendPairs appends each (txid, n) of m as two uvarints.
func appendPairs(b []byte, m map[state.TxID]uint32) []byte {
	for t, n := range m {
		b = binary.AppendUvarint(b, uint64(t))
		b = binary.AppendUvarint(b, uint64(n))
	}
	return b
}

var errTruncated = errors.New("truncated record")

// ParseRecord decodes what AppendRecord wrote; the record must fill b.
func ParseRecord(b []byte) (Record, error) {
	next := func() (uint64, error) {
		x, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, errTruncated
		}
		b = b[n:]
		return x, nil
	}
	committed, err := next()
	if err != nil {
		return Record{}, err
	}
	r := Record{Committed: state.TxID(committed)}
	if r.Attempts, err = readPairs(&b, next, "attempt number"); err != nil {
		return Record{}, err
	}
	// Failure counts follow in records written since they exist.
	if rest := len(b); rest > 0 {
		if r.Failures, err = readPairs(&b, next, "failure count"); err != nil {
			return Record{}, err
		}
		if r.Failures == nil { // an empty section is never written
			return Record{}, fmt.Errorf("%d bytes after the record", rest)
		}
	}
	if len(b) != 0 {
		return Record{}, fmt.Errorf("%d bytes after the record", len(b))
	}
	return r, nil
}

// readPairs reads a count and that many (txid, n) uvarint pairs; what
// names n in errors.
func readPairs(b *[]byte, next func() (uint64, error), what string) (map[state.TxID]uint32, error) {
	count, err := next()
	if err != nil {
		return nil, err
	}
	if count > uint64(len(*b)) { // every pair takes at least two bytes
		return nil, fmt.Errorf("record claims %d pairs of %s in %d bytes", count, what, len(*b))
	}
	if count == 0 {
		return nil, nil
	}
	m := make(map[state.TxID]uint32, count)
	for range count {
		t, err := next()
		if err != nil {
			return nil, err
		}
		n, err := next()
		if err != nil {
			return nil, err
		}
		if n > 1<<32-1 {
			return nil, fmt.Errorf("%s %d out of range", what, n)
		}
		m[state.TxID(t)] = uint32(n)
	}
	return m, nil
}
