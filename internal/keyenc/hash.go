package keyenc

// Key hashing: fields grouping (topology.ByFields) routes a tuple by the
// 64-bit FNV-1a hash of its grouping values' encodings, one after the
// other, so that values that are the same state key go to the same task
// in every process and run. A state key's encoding is a msgpack array of
// those same encodings, so a store can tell which task a stored key was
// routed to (KeyIndex).

// HashOffset is FNV-1a's offset basis: the hash of nothing.
const HashOffset = 14695981039346656037

const hashPrime = 1099511628211

// HashString folds s into the FNV-1a hash h.
func HashString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= hashPrime
	}
	return h
}

// HashBytes folds b into the FNV-1a hash h.
func HashBytes(h uint64, b []byte) uint64 {
	for _, c := range b {
		h ^= uint64(c)
		h *= hashPrime
	}
	return h
}

// KeyIndex returns the index, among n tasks, that fields grouping sends
// the grouping values of the state key with encoding enc to: the hash of
// enc without its array header, modulo n. It depends on the encoding
// only, so a key rebuilt from its encoding (an int8 for a stored int64)
// has the index of the key that was written.
func KeyIndex(enc string, n int) int {
	if n <= 1 {
		return 0
	}
	return int(HashString(HashOffset, enc[arrayHeaderLen(enc):]) % uint64(n))
}

// arrayHeaderLen returns the length of the msgpack array header that
// starts enc (AppendArrayLen): fixarray, array 16 or array 32.
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
