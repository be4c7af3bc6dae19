package cassandra

// keyPartition returns the partition, of n, that trident routes the key
// with canonical encoding enc (state.Key.Encoded) to: GroupBy partitions
// by fields grouping (topology.ByFields), which hashes each grouping
// value's canonical key encoding, one after the other, with 64-bit
// FNV-1a and takes the hash modulo the number of tasks. A key's encoding
// is a msgpack array of those same encodings, so the hash is that of enc
// without its array header. It depends on the encoding only, so a key
// rebuilt by state.DecodeKey (int8(5) for an int64(5)) has the partition
// of the key that was written. TestKeyPartitionIsTheRouters checks it
// against topology.FieldsIndex.
//
// The function is topology's, copied: state may not import topology (a
// higher layer).
func keyPartition(enc string, n int) int {
	if n <= 1 {
		return 0
	}
	const (
		fnvOffset = 14695981039346656037
		fnvPrime  = 1099511628211
	)
	h := uint64(fnvOffset)
	for i := arrayHeaderLen(enc); i < len(enc); i++ {
		h ^= uint64(enc[i])
		h *= fnvPrime
	}
	return int(h % uint64(n))
}

// arrayHeaderLen returns the length of the msgpack array header that
// starts enc: fixarray, array 16 or array 32 (see keyenc.AppendArrayLen).
func arrayHeaderLen(enc string) int {
	if enc == "" {
		return 0
	}
	switch b := enc[0]; {
	case b&0xf0 == 0x90:
		return 1
	case b == 0xdc:
		return min(3, len(enc))
	case b == 0xdd:
		return min(5, len(enc))
	}
	return 0
}
