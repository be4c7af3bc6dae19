package coordstore

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/squallstream/squall/txn"
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
func appendPairs(b []byte, m map[txn.TxID]uint32) []byte {
	for t, n := range m {
		b = binary.AppendUvarint(b, uint64(t))
		b = binary.AppendUvarint(b, uint64(n))
	}
	return b
}

var errTruncated = errors.New("truncated record")

// ParseRecord decodes what AppendRecord wrote; the record must fill b.
func ParseRecord(b []byte) (Record, error) {
	d := decoder{b}
	committed, err := d.next()
	if err != nil {
		return Record{}, err
	}
	r := Record{Committed: txn.TxID(committed)}
	if r.Attempts, err = d.pairs("attempt number"); err != nil {
		return Record{}, err
	}
	// Failure counts follow in records written since they exist.
	if rest := len(d.b); rest > 0 {
		if r.Failures, err = d.pairs("failure count"); err != nil {
			return Record{}, err
		}
		if r.Failures == nil { // an empty section is never written
			return Record{}, fmt.Errorf("%d bytes after the record", rest)
		}
	}
	if len(d.b) != 0 {
		return Record{}, fmt.Errorf("%d bytes after the record", len(d.b))
	}
	return r, nil
}

// decoder reads uvarints from the front of b.
type decoder struct{ b []byte }

func (d *decoder) next() (uint64, error) {
	x, n := binary.Uvarint(d.b)
	if n <= 0 {
		return 0, errTruncated
	}
	d.b = d.b[n:]
	return x, nil
}

// pairs reads a count and that many (txid, n) pairs; what names n in
// errors. A count of 0 gives a nil map.
func (d *decoder) pairs(what string) (map[txn.TxID]uint32, error) {
	count, err := d.next()
	if err != nil {
		return nil, err
	}
	if count > uint64(len(d.b)) { // every pair takes at least two bytes
		return nil, fmt.Errorf("record claims %d pairs of %s in %d bytes", count, what, len(d.b))
	}
	if count == 0 {
		return nil, nil
	}
	m := make(map[txn.TxID]uint32, count)
	for range count {
		t, err := d.next()
		if err != nil {
			return nil, err
		}
		n, err := d.next()
		if err != nil {
			return nil, err
		}
		if n > 1<<32-1 {
			return nil, fmt.Errorf("%s %d out of range", what, n)
		}
		m[txn.TxID(t)] = uint32(n)
	}
	return m, nil
}
