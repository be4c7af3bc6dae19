package boltstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/trident/coordstore"
)

// format is the first byte of every stored value.
const format = 1

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// frame returns format, CRC-32C(payload) and payload.
func frame(payload []byte) []byte {
	b := make([]byte, 5, 5+len(payload))
	b[0] = format
	binary.LittleEndian.PutUint32(b[1:], crc32.Checksum(payload, castagnoli))
	return append(b, payload...)
}

// unframe checks a stored value and returns a copy of its payload.
func unframe(b []byte) ([]byte, error) {
	if len(b) < 5 {
		return nil, fmt.Errorf("value of %d bytes is shorter than its header", len(b))
	}
	if b[0] != format {
		return nil, fmt.Errorf("unknown value format %d", b[0])
	}
	payload := b[5:]
	if want, got := binary.LittleEndian.Uint32(b[1:]), crc32.Checksum(payload, castagnoli); want != got {
		return nil, fmt.Errorf("checksum mismatch: stored %08x, computed %08x", want, got)
	}
	return append([]byte{}, payload...), nil
}

// encodeRecord returns the payload of a coordinator record: version,
// committed txid, the number of attempts and each (txid, attempt), all as
// uvarints.
func encodeRecord(v coordstore.Version, r coordstore.Record) []byte {
	b := make([]byte, 0, 3*binary.MaxVarintLen64+len(r.Attempts)*(binary.MaxVarintLen64+binary.MaxVarintLen32))
	b = binary.AppendUvarint(b, uint64(v))
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

func decodeRecord(b []byte) (coordstore.Version, coordstore.Record, error) {
	next := func() (uint64, error) {
		x, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, errTruncated
		}
		b = b[n:]
		return x, nil
	}
	var fields [3]uint64
	for i := range fields {
		x, err := next()
		if err != nil {
			return 0, coordstore.Record{}, err
		}
		fields[i] = x
	}
	v, r, count := coordstore.Version(fields[0]), coordstore.Record{Committed: state.TxID(fields[1])}, fields[2]
	if count > uint64(len(b)) { // every attempt takes at least two bytes
		return 0, coordstore.Record{}, fmt.Errorf("record claims %d attempts in %d bytes", count, len(b))
	}
	var err error
	if r.Attempts, err = readPairs(next, count, "attempt number"); err != nil {
		return 0, coordstore.Record{}, err
	}
	// Failure counts follow in records written since they exist.
	if rest := len(b); rest > 0 {
		n, err := next()
		if err != nil {
			return 0, coordstore.Record{}, err
		}
		if n == 0 { // never written: an empty section is left out
			return 0, coordstore.Record{}, fmt.Errorf("%d bytes after the record", rest)
		}
		if n > uint64(len(b)) {
			return 0, coordstore.Record{}, fmt.Errorf("record claims %d failure counts in %d bytes", n, len(b))
		}
		if r.Failures, err = readPairs(next, n, "failure count"); err != nil {
			return 0, coordstore.Record{}, err
		}
	}
	if len(b) != 0 {
		return 0, coordstore.Record{}, fmt.Errorf("%d bytes after the record", len(b))
	}
	if v == 0 {
		return 0, coordstore.Record{}, errors.New("stored record with version 0")
	}
	return v, r, nil
}

// txKey returns the bucket key of txid.
func txKey(txid state.TxID) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), uint64(txid))
}

func keyTx(k []byte) (state.TxID, error) {
	if len(k) != 8 {
		return 0, fmt.Errorf("meta key of %d bytes, want 8", len(k))
	}
	return state.TxID(binary.BigEndian.Uint64(k)), nil
}

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
