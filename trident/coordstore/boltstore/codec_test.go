package boltstore

import (
	"encoding/binary"
	"maps"
	"testing"

	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/txn"
)

// TestDecodeRecordWithoutFailures: records written before failure counts
// existed (version, committed, attempts and nothing after) still load.
func TestDecodeRecordWithoutFailures(t *testing.T) {
	var b []byte
	for _, x := range []uint64{7, 3, 2, 4, 1, 5, 0} { // v7, committed 3, attempts {4:1, 5:0}
		b = binary.AppendUvarint(b, x)
	}
	v, r, err := decodeRecord(b)
	want := map[txn.TxID]uint32{4: 1, 5: 0}
	if err != nil || v != 7 || r.Committed != 3 || !maps.Equal(r.Attempts, want) || r.Failures != nil {
		t.Fatalf("old record: v%d %+v %v", v, r, err)
	}
	// And a record without failure counts is still written that way.
	if got := encodeRecord(7, coordstore.Record{Committed: 3, Attempts: map[txn.TxID]uint32{4: 1}}); len(got) != 5 {
		t.Fatalf("record without failures encodes to %d bytes, want 5", len(got))
	}
	// A truncated failure section is an error.
	if _, _, err := decodeRecord(append(b, 3, 4)); err == nil {
		t.Fatal("truncated failure counts decoded")
	}
}
