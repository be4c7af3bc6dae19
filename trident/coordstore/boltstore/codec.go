package boltstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/txn"
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

// encodeRecord returns the payload of a coordinator record: the version
// as a uvarint, then coordstore.AppendRecord's wire form.
func encodeRecord(v coordstore.Version, r coordstore.Record) []byte {
	return coordstore.AppendRecord(binary.AppendUvarint(nil, uint64(v)), r)
}

func decodeRecord(b []byte) (coordstore.Version, coordstore.Record, error) {
	v, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, coordstore.Record{}, errors.New("truncated record")
	}
	r, err := coordstore.ParseRecord(b[n:])
	if err != nil {
		return 0, coordstore.Record{}, err
	}
	if v == 0 {
		return 0, coordstore.Record{}, errors.New("stored record with version 0")
	}
	return coordstore.Version(v), r, nil
}

// txKey returns the bucket key of txid.
func txKey(txid txn.TxID) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), uint64(txid))
}

func keyTx(k []byte) (txn.TxID, error) {
	if len(k) != 8 {
		return 0, fmt.Errorf("meta key of %d bytes, want 8", len(k))
	}
	return txn.TxID(binary.BigEndian.Uint64(k)), nil
}
