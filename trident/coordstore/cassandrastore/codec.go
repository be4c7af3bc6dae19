package cassandrastore

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/trident/coordstore"
)

// recordFormat is the first byte of a stored record.
const recordFormat = 1

// encodeRecord returns the record column: the format byte, then the
// committed txid, the number of attempts and each (txid, attempt), as
// uvarints. The version is a column of its own.
func encodeRecord(r coordstore.Record) []byte {
	b := make([]byte, 1, 1+2*binary.MaxVarintLen64+len(r.Attempts)*(binary.MaxVarintLen64+binary.MaxVarintLen32))
	b[0] = recordFormat
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

func decodeRecord(b []byte) (coordstore.Record, error) {
	if len(b) == 0 || b[0] != recordFormat {
		return coordstore.Record{}, fmt.Errorf("unknown record format (%d bytes)", len(b))
	}
	b = b[1:]
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
		return coordstore.Record{}, err
	}
	count, err := next()
	if err != nil {
		return coordstore.Record{}, err
	}
	if count > uint64(len(b)) { // every attempt takes at least two bytes
		return coordstore.Record{}, fmt.Errorf("record claims %d attempts in %d bytes", count, len(b))
	}
	r := coordstore.Record{Committed: state.TxID(committed)}
	if r.Attempts, err = readPairs(next, count, "attempt number"); err != nil {
		return coordstore.Record{}, err
	}
	// Failure counts follow in records written since they exist.
	if rest := len(b); rest > 0 {
		n, err := next()
		if err != nil {
			return coordstore.Record{}, err
		}
		if n == 0 { // never written: an empty section is left out
			return coordstore.Record{}, fmt.Errorf("%d bytes after the record", rest)
		}
		if n > uint64(len(b)) {
			return coordstore.Record{}, fmt.Errorf("record claims %d failure counts in %d bytes", n, len(b))
		}
		if r.Failures, err = readPairs(next, n, "failure count"); err != nil {
			return coordstore.Record{}, err
		}
	}
	if len(b) != 0 {
		return coordstore.Record{}, fmt.Errorf("%d bytes after the record", len(b))
	}
	return r, nil
}

// txCol maps a txid to the bigint clustering column, keeping the order of
// all uint64 values (the sign bit flipped).
func txCol(txid state.TxID) int64 { return int64(uint64(txid) ^ 1<<63) }

func colTx(c int64) state.TxID { return state.TxID(uint64(c) ^ 1<<63) }

// readPairs reads count (txid, n) uvarint pairs; what names n in errors.
func readPairs(next func() (uint64, error), count uint64, what string) (map[state.TxID]uint32, error) {
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
