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
	for t, n := range r.Attempts {
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
	if count > 0 {
		r.Attempts = make(map[state.TxID]uint32, count)
	}
	for range count {
		t, err := next()
		if err != nil {
			return 0, coordstore.Record{}, err
		}
		n, err := next()
		if err != nil {
			return 0, coordstore.Record{}, err
		}
		if n > 1<<32-1 {
			return 0, coordstore.Record{}, fmt.Errorf("attempt number %d out of range", n)
		}
		r.Attempts[state.TxID(t)] = uint32(n)
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
