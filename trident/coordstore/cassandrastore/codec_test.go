package cassandrastore

import (
	"maps"
	"testing"

	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/txn"
)

// TestRecordCodec: failure counts round-trip, and records written before
// they existed (format, committed, attempts and nothing after) still load.
func TestRecordCodec(t *testing.T) {
	r := coordstore.Record{Committed: 3, Attempts: map[txn.TxID]uint32{4: 1, 5: 0},
		Failures: map[txn.TxID]uint32{4: 2}}
	got, err := decodeRecord(encodeRecord(r))
	if err != nil || got.Committed != 3 || !maps.Equal(got.Attempts, r.Attempts) || !maps.Equal(got.Failures, r.Failures) {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	old := []byte{recordFormat, 3, 2, 4, 1, 5, 0}
	got, err = decodeRecord(old)
	if err != nil || got.Committed != 3 || !maps.Equal(got.Attempts, r.Attempts) || got.Failures != nil {
		t.Fatalf("old record: %+v %v", got, err)
	}
	if _, err := decodeRecord(append(old, 3, 4)); err == nil {
		t.Fatal("truncated failure counts decoded")
	}
}
