package cassandrastore

import (
	"fmt"

	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/txn"
)

// recordFormat is the first byte of a stored record.
const recordFormat = 1

// encodeRecord returns the record column: the format byte, then
// coordstore.AppendRecord's wire form. The version is a column of its own.
func encodeRecord(r coordstore.Record) []byte {
	return coordstore.AppendRecord([]byte{recordFormat}, r)
}

func decodeRecord(b []byte) (coordstore.Record, error) {
	if len(b) == 0 || b[0] != recordFormat {
		return coordstore.Record{}, fmt.Errorf("unknown record format (%d bytes)", len(b))
	}
	return coordstore.ParseRecord(b[1:])
}

// txCol maps a txid to the bigint clustering column, keeping the order of
// all uint64 values (the sign bit flipped).
func txCol(txid txn.TxID) int64 { return int64(uint64(txid) ^ 1<<63) }

func colTx(c int64) txn.TxID { return txn.TxID(uint64(c) ^ 1<<63) }
