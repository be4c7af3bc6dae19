package cassandra

import "github.com/squallstream/squall/internal/keyenc"

// keyPartition returns the partition, of n, that trident routes the key
// with canonical encoding enc (state.Key.Encoded) to: GroupBy partitions
// by fields grouping (topology.ByFields), which hashes the grouping
// values' key encodings (keyenc.KeyIndex). It depends on the encoding
// only, so a key rebuilt by state.DecodeKey (int8(5) for an int64(5))
// has the partition of the key that was written.
// TestKeyPartitionIsTheRouters checks it against topology.FieldsIndex.
func keyPartition(enc string, n int) int { return keyenc.KeyIndex(enc, n) }
